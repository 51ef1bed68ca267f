import { openAiSdk } from '../openai-sdk.ts';
import type { EmbeddingsProvider } from '../../ports/embeddings.ts';

// OpenAI-compatible /embeddings through the official SDK with a configurable baseURL
// (OpenAI, Azure-compatible gateways, Ollama, vLLM, LM Studio, TEI ...).

export interface OpenAiEmbeddingsOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs?: number;
  /** Inputs per request; providers cap batch sizes (OpenAI: 2048). */
  batchSize?: number;
}

export function createOpenAiEmbeddings(options: OpenAiEmbeddingsOptions): EmbeddingsProvider {
  const client = new (openAiSdk().OpenAI)({
    baseURL: options.baseUrl,
    // Local servers need no key, but the SDK refuses to start without one.
    apiKey: options.apiKey ?? 'not-needed',
    timeout: options.timeoutMs ?? 30_000,
    maxRetries: 2,
  });
  const batchSize = options.batchSize ?? 64;
  return {
    model: options.model,
    async embed(texts) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        const batch = texts.slice(i, i + batchSize);
        // encoding_format float: several compatible servers do not implement base64.
        const response = await client.embeddings.create({ model: options.model, input: batch, encoding_format: 'float' });
        const vectors = [...response.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
        if (vectors.length !== batch.length) throw new Error(`embeddings provider returned ${vectors.length} vectors for ${batch.length} inputs`);
        out.push(...vectors);
      }
      return out;
    },
  };
}
