import { createDialogueEngine } from '../../engine/index.ts';
import type { Platform } from '../../platform/platform.ts';
import { createFunctionCaller } from '../agents/functions.ts';
import type { CallsService } from '../calls/service.ts';
import type { KnowledgeSearch } from '../knowledge-base/search.ts';
import { bootstrapDemo } from './bootstrap.ts';
import { demoRoutes } from './routes.ts';
import { createDemoService } from './service.ts';

// The demo module: the demo call through the calls service, the demo chat through the dialogue
// engine (as the agents' chat builds it), and the demo workspace made when the routes are registered.

export function createDemoModule(platform: Platform, deps: { calls: CallsService; knowledge: KnowledgeSearch }) {
  const { db, clock, config } = platform;
  const functions = createFunctionCaller({ outbound: platform.outbound, clock });
  const bootstrap = () => bootstrapDemo({ db, clock, config });
  const service = createDemoService({
    db,
    calls: deps.calls,
    telephony: platform.providers.telephony,
    bootstrap,
    engineFor: (agent) =>
      createDialogueEngine({ llm: platform.providers.llmFor(agent.llm), knowledge: deps.knowledge, functions: functions.invokerFor({ agentId: agent.id, secret: agent.webhook_secret }) }),
  });
  // Not fatal: without a database now the demo is made on its first request instead.
  const prepare = () =>
    bootstrap().then(
      () => undefined,
      (err: unknown) => platform.logger.error({ err }, 'demo bootstrap failed; it is retried on the first demo request'),
    );
  return { routes: demoRoutes(service, prepare), service };
}
