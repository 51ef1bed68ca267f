import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Executor } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';
import { usdToMicros } from '../../platform/money.ts';
import { newWebhookSecret } from '../../platform/outbox/signing.ts';
import { DEFAULT_VOICE_ID } from '../../ports/tts.ts';
import { createAgentsRepo, type AgentValues } from '../agents/repo.ts';
import { BUILTIN_LLM_MODEL, DEFAULT_LANGUAGE } from '../agents/schemas.ts';
import { DEFAULT_TEMPERATURE } from '../agents/service.ts';
import { createWalletRepo } from '../wallet/repo.ts';
import { createWorkspacesRepo } from '../workspaces/repo.ts';

// The demo workspace and its agent, made at start-up by every instance. The first transaction to
// insert the `demo_setup` row (its key is the primary key; ON CONFLICT DO NOTHING) creates the
// workspace, wallet and agent; any other instance starting at the same time waits on that row and
// finds them made. Each start-up then brings the agent's model and limits to this configuration
// and the wallet up to DEMO_CREDIT_USD (the wallet row locked, so racing instances credit once).

export const DEMO_KEY = 'demo';
/** A demo call ends after this, whatever it says. */
export const DEMO_MAX_DURATION_SECONDS = 120;

export interface DemoIds {
  workspaceId: string;
  agentId: string;
}

export interface DemoBootstrapDeps {
  db: Database;
  clock: Clock;
  config: Pick<Config, 'demoCreditUsd' | 'llm'>;
}

const DEMO_PROMPT = [
  'You are the demo agent of the Voice Agent Platform, an open, self-hostable API for voice agents.',
  'Answer questions about what the platform does (phone calls, web voice sessions, chat widgets,',
  'knowledge bases, campaigns, webhooks) briefly and in a friendly tone. Keep every answer short.',
].join(' ');

function demoLlm(config: DemoBootstrapDeps['config']): AgentValues['llm'] {
  return config.llm.baseUrl
    ? { provider: 'openai', model: config.llm.model, temperature: DEFAULT_TEMPERATURE }
    : { provider: 'builtin', model: BUILTIN_LLM_MODEL, temperature: DEFAULT_TEMPERATURE };
}

function demoAgentValues(config: DemoBootstrapDeps['config']): AgentValues {
  return {
    name: 'Demo',
    prompt: DEMO_PROMPT,
    first_message: 'Hi! This is the Voice Agent Platform demo. What would you like to know?',
    language: DEFAULT_LANGUAGE,
    voice: DEFAULT_VOICE_ID,
    llm: demoLlm(config),
    knowledge_base_ids: [],
    transfer_number: null,
    functions: [],
    extraction_fields: [],
    end_call_phrases: [],
    max_duration_seconds: DEMO_MAX_DURATION_SECONDS,
    turn_end_silence_ms: 500,
    barge_in_min_ms: 250,
    interruptible: true,
    silence_timeout_seconds: 10,
    voicemail: { action: 'hangup', message: null },
    webhook_url: null,
    webhook_events: [],
    metadata: { demo: true },
  };
}

/** The demo's ids, or undefined before the bootstrap ran (or after its workspace was removed). */
export async function findDemo(db: Executor): Promise<DemoIds | undefined> {
  const row = await db.selectFrom('demo_setup').select(['workspace_id', 'agent_id']).where('key', '=', DEMO_KEY).executeTakeFirst();
  return row ? { workspaceId: row.workspace_id, agentId: row.agent_id } : undefined;
}

/** Creates the demo workspace and agent unless they exist, and tops the demo wallet up. Safe to run concurrently. */
export async function bootstrapDemo(deps: DemoBootstrapDeps): Promise<DemoIds> {
  const { db, clock, config } = deps;
  const agents = createAgentsRepo();
  const wallet = createWalletRepo();
  return db.transaction().execute(async (tx) => {
    const now = clock.now();
    const claimed = await tx
      .insertInto('demo_setup')
      .values({ key: DEMO_KEY, workspace_id: newId('ws'), agent_id: newId('agent'), created_at: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (claimed) {
      // The foreign keys of demo_setup are checked at commit, once these rows exist.
      await createWorkspacesRepo().insertUnowned(tx, { id: claimed.workspace_id, name: 'Demo', now });
      await wallet.create(tx, { workspaceId: claimed.workspace_id, now });
      await agents.insert(tx, { id: claimed.agent_id, workspaceId: claimed.workspace_id, values: demoAgentValues(config), webhookSecret: newWebhookSecret(), now });
    }
    const demo = claimed ? { workspaceId: claimed.workspace_id, agentId: claimed.agent_id } : await findDemo(tx);
    if (!demo) throw new Error('the demo_setup row vanished during the bootstrap');
    await agents.update(tx, demo.workspaceId, demo.agentId, { llm: demoLlm(config), max_duration_seconds: DEMO_MAX_DURATION_SECONDS }, now);

    const balance = await tx.selectFrom('wallets').select('balance_micros').where('workspace_id', '=', demo.workspaceId).forUpdate().executeTakeFirstOrThrow();
    const shortfall = usdToMicros(config.demoCreditUsd) - Number(balance.balance_micros);
    if (shortfall > 0) {
      await wallet.applyEntry(tx, { workspaceId: demo.workspaceId, type: 'adjustment', amountMicros: shortfall, description: 'demo credit (DEMO_CREDIT_USD)', now });
    }
    return demo;
  });
}
