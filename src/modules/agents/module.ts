import { createDialogueEngine } from '../../engine/index.ts';
import type { Platform } from '../../platform/platform.ts';
import { knowledgeOf } from '../knowledge-base/knowledge.ts';
import { createFunctionCaller } from './functions.ts';
import { createAgentsRepo } from './repo.ts';
import { type AgentsService, createAgentsService } from './service.ts';

// The app's one agents service, shared by the agents routes and the widgets' public chat.

const byPlatform = new WeakMap<Platform, AgentsService>();

export function agentsServiceOf(platform: Platform): AgentsService {
  let service = byPlatform.get(platform);
  if (!service) {
    const { config, db, clock } = platform;
    const knowledge = knowledgeOf(platform).search;
    service = createAgentsService({
      db,
      clock,
      config,
      repo: createAgentsRepo(),
      tts: platform.providers.tts,
      functions: createFunctionCaller({ outbound: platform.outbound, clock }),
      events: platform.events,
      engineFor: (agent, functions) => createDialogueEngine({ llm: platform.providers.llmFor(agent.llm), knowledge, functions }),
    });
    byPlatform.set(platform, service);
  }
  return service;
}
