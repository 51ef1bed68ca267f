import type { Platform } from '../../platform/platform.ts';
import type { EmbeddingsProvider } from '../../ports/embeddings.ts';
import { createKnowledgeSearch, type KnowledgeSearch } from './search.ts';

// The app's one knowledge search (with its in-memory vector and word caches), over the
// deployment's embeddings adapter (platform.providers.embeddings), shared by the knowledge-base
// routes and by the agents' dialogue engine.

export interface Knowledge {
  /** From EMBEDDINGS_BASE_URL, or none: full-text retrieval only. */
  embeddings: EmbeddingsProvider | undefined;
  search: KnowledgeSearch;
}

const byPlatform = new WeakMap<Platform, Knowledge>();

export function knowledgeOf(platform: Platform): Knowledge {
  let knowledge = byPlatform.get(platform);
  if (!knowledge) {
    const { embeddings } = platform.providers;
    const search = createKnowledgeSearch({
      db: platform.db,
      embeddings,
      onEmbeddingError: (err) => platform.logger.warn({ err }, 'query embedding failed; ranking by full text only'),
    });
    knowledge = { embeddings, search };
    byPlatform.set(platform, knowledge);
  }
  return knowledge;
}
