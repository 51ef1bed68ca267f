import type { FastifyBaseLogger } from 'fastify';
import { type RawBuilder, sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import type { Executor } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';
import { createJobRunner } from '../../platform/jobs/runner.ts';
import { createWakeSignal } from '../../platform/outbox/emitter.ts';
import type { EventEmitter } from '../../platform/outbox/emit.ts';
import { SANDBOX_CALLER_ID } from '../../ports/telephony.ts';
import type { CallJournal, FinishedCall } from '../calls/journal.ts';
import type { CallSimulation, CallStatus } from '../calls/tables.ts';
import { isWindowOpen } from './calling-window.ts';
import { beginAttempt, lockRunningCampaigns, pendingTimeZones, pickDueContacts } from './dialer-sql.ts';
import { type CampaignRow, type ContactCounts, createCampaignsRepo } from './repo.ts';
import type { CallingWindow, ContactStatus } from './tables.ts';

// The campaign dialer, a job on the platform's job runner (DESIGN part 6, Campaigns). Each pass
// locks the running campaigns (SKIP LOCKED) and, per campaign, queues a call through the call
// journal for each contact that is due, in its calling window, within the campaign's room; the
// calls dialer (calls/worker.ts) then runs them within the workspace's max_concurrent_calls, like
// any other call; a call's end refills its slot in its own finishing transaction. The contact
// becomes `calling` and its attempt row is written in the same
// transaction as the queued call, so a crash either loses both or keeps both: a contact is never
// dialed twice for one attempt, and a call whose process died is ended by the calls' lease sweep,
// which reaches the contact through the journal's finish hook (registered here): retry (busy,
// no answer, attempts left), reached, failed; the last contact completes the campaign and sends
// `campaign.completed`. An empty wallet pauses the campaign (pause_reason insufficient_balance).

/** NOTIFY channel of the campaign dialers (PostgreSQL: wakes those of every instance after commit). */
export const CAMPAIGN_CHANNEL = 'campaign_dialer';
const REACHED: CallStatus[] = ['completed', 'transferred', 'voicemail'];
const RETRIED: CallStatus[] = ['busy', 'no_answer'];
const CAMPAIGNS_PER_PASS = 50;

export interface CampaignDialerDeps {
  database: DatabaseHandle;
  clock: Clock;
  logger: FastifyBaseLogger;
  /** Sends `campaign.completed` in the finishing transaction. */
  events: EventEmitter;
  /** The calls' journal: queues the contacts' calls; its finish hook moves the contact on. */
  journal: CallJournal;
  /** The telephony provider's name, on every call queued. */
  provider: string;
  /** Wakes the calls dialer once calls are queued. */
  nudgeCalls(): void;
  pollIntervalMs?: number;
}

export function createCampaignDialer(deps: CampaignDialerDeps) {
  const { database, clock, logger, events, journal, nudgeCalls } = deps;
  const { db } = database;
  const repo = createCampaignsRepo();
  const wake = createWakeSignal();
  const postgres = database.kind === 'postgres';

  /** Inside a transaction that made contacts due: every dialer wakes once it commits. */
  async function announce(tx: Executor): Promise<void> {
    if (postgres) await sql`select pg_notify(${CAMPAIGN_CHANNEL}, '')`.execute(tx);
    wake.nudge();
  }

  /** running → completed when no contact waits or is being called: `campaign.completed`, once. */
  async function completeIfDone(tx: Executor, campaign: CampaignRow): Promise<void> {
    if (campaign.status !== 'running' || (await repo.hasOpenContacts(tx, campaign.id))) return;
    const now = clock.now();
    const done = await tx.updateTable('campaigns').set({ status: 'completed', completed_at: now, updated_at: now }).where('id', '=', campaign.id).where('status', '=', 'running').returningAll().executeTakeFirst();
    if (!done) return;
    // counts() answers every campaign it is asked about.
    const counts = (await repo.counts(tx, [campaign.id])).get(campaign.id) as ContactCounts;
    await events.emit(tx, {
      workspaceId: campaign.workspace_id,
      type: 'campaign.completed',
      tenantOnly: true,
      data: {
        campaign_id: campaign.id,
        name: campaign.name,
        total: counts.total,
        completed: counts.completed,
        failed: counts.failed,
        started_at: done.started_at ? new Date(done.started_at).toISOString() : null,
        completed_at: now.toISOString(),
      },
    });
  }

  /** The journal's finishing transaction of a campaign call: the attempt, the contact, maybe the campaign. */
  journal.onFinish(async (tx, call, finished: FinishedCall) => {
    const attempt = await tx
      .updateTable('campaign_attempts')
      .set({ status: finished.status, end_reason: finished.endReason, ended_at: finished.endedAt })
      .where('call_id', '=', call.id)
      .returningAll()
      .executeTakeFirst();
    if (!attempt) return;
    // The campaign row first (as the dialer and the state changes lock it): two calls ending at
    // once then see each other's contact, so exactly one of them completes the campaign.
    const campaign = await tx.selectFrom('campaigns').selectAll().where('id', '=', attempt.campaign_id).forUpdate().executeTakeFirst();
    if (!campaign) return;
    const set: { status: ContactStatus; next_attempt_at?: Date | null; attempts?: RawBuilder<number>; updated_at: Date } = { status: 'failed', updated_at: finished.endedAt };
    if (finished.status === 'canceled') {
      // Withdrawn before it was dialed (pause, cancel): the attempt is given back.
      set.status = campaign.status === 'canceled' ? 'canceled' : 'pending';
      set.attempts = sql<number>`attempts - 1`;
      set.next_attempt_at = null;
    } else if (REACHED.includes(finished.status)) {
      set.status = 'completed';
    } else if (RETRIED.includes(finished.status) && attempt.attempt < campaign.max_attempts) {
      set.status = campaign.status === 'canceled' ? 'canceled' : 'pending';
      set.next_attempt_at = new Date(finished.endedAt.getTime() + campaign.retry_delay_minutes * 60_000);
    }
    await tx.updateTable('campaign_contacts').set(set).where('id', '=', attempt.contact_id).where('call_id', '=', call.id).where('status', '=', 'calling').execute();
    // The freed slot is refilled in this same transaction (the next due contact's call queued
    // under the campaign lock), so its next dial waits only for the calls dialer's claim; with no
    // contact due, this may be the end of the campaign.
    if (campaign.status !== 'running') return;
    const queued = await dialCampaign(tx, campaign);
    if (queued > 0) setImmediate(nudgeCalls);
  });

  /** The zones whose window is open now, or undefined when the campaign has no window. */
  async function openZones(tx: Executor, campaign: CampaignRow, now: Date) {
    const window = campaign.calling_window as CallingWindow | null;
    if (!window) return undefined;
    const zones = await pendingTimeZones(tx, campaign.id);
    return {
      zones: zones.filter((z): z is string => z !== null && isWindowOpen(window, z, now)),
      nullZone: zones.includes(null) && isWindowOpen(window, null, now),
    };
  }

  /** Queues the due contacts of one locked campaign; answers how many calls were queued. */
  async function dialCampaign(tx: Executor, campaign: CampaignRow): Promise<number> {
    const now = clock.now();
    const wallet = await tx.selectFrom('wallets').select('balance_micros').where('workspace_id', '=', campaign.workspace_id).executeTakeFirst();
    if (Number(wallet?.balance_micros ?? 0) <= 0) {
      await tx.updateTable('campaigns').set({ status: 'paused', pause_reason: 'insufficient_balance', updated_at: now }).where('id', '=', campaign.id).execute();
      logger.info({ campaignId: campaign.id }, 'campaign paused: the wallet is empty');
      return 0;
    }
    const window = await openZones(tx, campaign, now);
    const due = await pickDueContacts(tx, campaign, now, window);
    if (due.length === 0) {
      await completeIfDone(tx, campaign);
      return 0;
    }
    const blocked = await repo.doNotCall(tx, campaign.workspace_id, due.map((c) => c.phone));
    let queued = 0;
    for (const contact of due) {
      if (blocked.has(contact.phone)) {
        await tx.updateTable('campaign_contacts').set({ status: 'skipped', updated_at: now }).where('id', '=', contact.id).execute();
        continue;
      }
      const callId = newId('call');
      await beginAttempt(tx, contact, callId, now);
      await journal.queue(tx, {
        id: callId,
        workspace_id: campaign.workspace_id,
        agent_id: campaign.agent_id,
        direction: 'outbound',
        from_number: campaign.from_number ?? SANDBOX_CALLER_ID,
        to_number: contact.phone,
        provider: deps.provider,
        variables: contact.variables as Record<string, string>,
        metadata: { campaign_contact_id: contact.id },
        simulation: campaign.simulation as CallSimulation | null,
        campaign_id: campaign.id,
      });
      queued += 1;
    }
    // Skipped contacts left room: the next pass fills it.
    if (queued < due.length) wake.nudge();
    return queued;
  }

  /** The last campaign the previous pass reached: the next one starts after it. */
  let reachedUpTo = '';

  /** One pass over the running campaigns; answers how many calls it queued. */
  async function dialOnce(): Promise<number> {
    const queued = await db.transaction().execute(async (tx) => {
      const campaigns = await lockRunningCampaigns(tx, CAMPAIGNS_PER_PASS, reachedUpTo);
      let n = 0;
      for (const campaign of campaigns) n += await dialCampaign(tx, campaign);
      reachedUpTo = campaigns.at(-1)?.id ?? '';
      return n;
    });
    if (queued > 0) nudgeCalls();
    return queued;
  }

  const jobs = createJobRunner<never>({
    database,
    clock,
    logger,
    job: {
      name: 'campaigns',
      async claim() {
        await dialOnce();
        return [];
      },
      run: async () => undefined,
      concurrency: 1,
      pollIntervalMs: deps.pollIntervalMs ?? 1000,
      channel: CAMPAIGN_CHANNEL,
      wake,
    },
  });

  return {
    announce,
    /** One pass (tests): queues what is due now; answers how many calls. */
    runDueOnce: dialOnce,
    start: () => jobs.start(),
    stop: () => jobs.stop(),
  };
}

export type CampaignDialer = ReturnType<typeof createCampaignDialer>;
