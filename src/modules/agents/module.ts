import { createDialogueEngine } from '../../engine/index.ts';
import type { Platform } from '../../platform/platform.ts';
import type { KnowledgeSearch } from '../knowledge-base/search.ts';
import { createFunctionCaller } from './functions.ts';
import { createAgentsRepo } from './repo.ts';
import { agentsRoutes } from './routes.ts';
import { createAgentsService } from './service.ts';

// The agents module: the routes and the service, which the widgets' public chat also uses; its
// dialogue engine searches the knowledge bases through the app's one knowledge search.

export function createAgentsModule(platform: Platform, deps: { knowledge: KnowledgeSearch }) {
  const { config, db, clock } = platform;
  const service = createAgentsService({
    db,
    clock,
    config,
    repo: createAgentsRepo(),
    tts: platform.providers.tts,
    functions: createFunctionCaller({ outbound: platform.outbound, clock }),
    events: platform.events,
    engineFor: (agent, functions) => createDialogueEngine({ llm: platform.providers.llmFor(agent.llm), knowledge: deps.knowledge, functions }),
  });
  return { routes: agentsRoutes(service), service };
}
