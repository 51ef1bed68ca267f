import type { Platform } from '../../platform/platform.ts';
import { createKnowledgeBaseRepo } from './repo.ts';
import { knowledgeBaseRoutes } from './routes.ts';
import { createKnowledgeSearch } from './search.ts';
import { createKnowledgeBaseService, type KnowledgeBaseServiceDeps } from './service.ts';

// The knowledge-base module: bases and their sources (routes, service), and the app's one
// knowledge search (with its in-memory vector and word caches) over the deployment's embeddings
// adapter, which the composition root hands to the agents', the calls' and the demo's engines.

export function createKnowledgeBaseModule(platform: Platform, deps: Pick<KnowledgeBaseServiceDeps, 'detachFromAgents'>) {
  // From EMBEDDINGS_BASE_URL, or none: full-text retrieval only.
  const { embeddings } = platform.providers;
  const search = createKnowledgeSearch({
    db: platform.db,
    embeddings,
    onEmbeddingError: (err) => platform.logger.warn({ err }, 'query embedding failed; ranking by full text only'),
  });
  const service = createKnowledgeBaseService({
    db: platform.db,
    clock: platform.clock,
    logger: platform.logger,
    config: platform.config,
    outbound: platform.outbound,
    embeddings,
    repo: createKnowledgeBaseRepo(),
    search,
    // Text extraction and chunking run in the app's worker threads.
    cpu: platform.cpu,
    detachFromAgents: deps.detachFromAgents,
  });
  return { routes: knowledgeBaseRoutes(service), service, search };
}
