// The fake embeddings provider of bench/knowledge-base.bench.ts in a worker thread of its own: a
// real provider is another machine, so its work must not share the platform's event loop.
import { parentPort } from 'node:worker_threads';
import { startFakeEmbeddingsServer } from '../../test/fakes/openai/embeddings.ts';

const server = await startFakeEmbeddingsServer();
parentPort?.postMessage({ baseUrl: server.baseUrl });
parentPort?.on('message', async (message: { type: string }) => {
  if (message.type !== 'close') return;
  await server.close();
  parentPort?.close();
});
