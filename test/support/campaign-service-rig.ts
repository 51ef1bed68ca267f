import type { FastifyBaseLogger } from 'fastify';
import type { Insertable } from 'kysely';
import { pino } from 'pino';
import type { WorkspaceContext } from '../../src/platform/auth/access.ts';
import { type CpuRunner, callingThread } from '../../src/platform/cpu-pool.ts';
import type { Executor } from '../../src/platform/db/schema.ts';
import { AppError } from '../../src/platform/errors.ts';
import { newId } from '../../src/platform/ids.ts';
import { createCallsRepo } from '../../src/modules/calls/repo.ts';
import { createCampaignDialer } from '../../src/modules/campaigns/dialer.ts';
import { createCampaignsService } from '../../src/modules/campaigns/service.ts';
import type { CampaignsTable } from '../../src/modules/campaigns/tables.ts';
import { insertCampaign, seedWorkspace, T0 } from './campaign-rows.ts';
import { journalRig } from './call-rows.ts';

// The campaigns service built as src/modules/campaigns/module.ts builds it, without an app: the
// file's real database, a manual clock, the calls' journal with the campaign dialer's finish hook,
// the calls' queued-call read, uploads parsed on the calling thread. No job runs and no call is
// placed. `announced` counts the dialer wake-ups the service asked for.

export const ms = (value: Date | string | null) => (value === null ? null : new Date(value).getTime());

export const NOW = new Date(T0.getTime() + 3_600_000);

export async function campaignServiceRig() {
  const { database, db, clock, events, journal } = await journalRig({ start: NOW, rates: { callPerMinMicros: 60_000, webVoicePerMinMicros: 60_000 }, nudgePostCall: false });
  const logger = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
  const dialer = createCampaignDialer({ database, clock, logger, events, journal, provider: 'sandbox', nudgeCalls: () => {} });
  const calls = createCallsRepo(db);
  const announced = { count: 0 };
  // Races injected by tests: what happens between the queued calls' read and their withdrawal,
  // and while an upload is parsed (outside the campaign's lock).
  const races: { afterQueuedRead?: () => Promise<void>; duringParse?: () => Promise<void> } = {};
  const cpu: CpuRunner = {
    async run(task, input) {
      await races.duringParse?.();
      return callingThread.run(task, input);
    },
  };
  const build = (ownsCallerIds: boolean) =>
    createCampaignsService({
      db,
      clock,
      cpu,
      ownsCallerIds,
      journal,
      queuedCallsOf: async (id) => {
        const rows = await calls.queuedOfCampaign(id);
        await races.afterQueuedRead?.();
        return rows;
      },
      announce: async (tx: Executor) => {
        announced.count += 1;
        await dialer.announce(tx);
      },
    });
  /** A workspace of its own (agent, wallet) with one campaign. */
  async function setup(fields: Partial<Insertable<CampaignsTable>> = {}, balanceMicros?: number) {
    const ws = await seedWorkspace(db, balanceMicros);
    const campaign = await insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId, ...fields });
    return { ...ws, ctx: contextOf(ws.workspaceId), campaign };
  }
  /** The campaign's row as stored, its times as epoch ms; undefined once deleted. */
  async function rowOf(id: string) {
    const row = await db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    return { ...row, started_at: ms(row.started_at), completed_at: ms(row.completed_at), canceled_at: ms(row.canceled_at), created_at: ms(row.created_at), updated_at: ms(row.updated_at) };
  }
  return { database, db, clock, service: build(false), carrier: build(true), announced, races, setup, rowOf };
}

export function contextOf(workspaceId: string): WorkspaceContext {
  return { workspaceId, scope: 'write', actor: { type: 'api_key', id: newId('key'), name: null } } as WorkspaceContext;
}

/** The AppError `promise` rejects with, as status, code, detail and field errors. */
export async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { status: error.status, code: error.code, detail: error.message, ...(error.errors ? { errors: error.errors } : {}) };
  }
  throw new Error('expected a refusal');
}

/** A number owned by the workspace (phone_numbers). */
export async function insertPhoneNumber(db: Executor, workspaceId: string, number: string) {
  await db
    .insertInto('phone_numbers')
    .values({ id: newId('pn'), workspace_id: workspaceId, number, country: 'US', provider: 'twilio', capabilities: JSON.stringify({ voice: true }), created_at: T0, updated_at: T0 } as never)
    .execute();
}
