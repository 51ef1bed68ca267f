import { isSupportedCountry } from 'libphonenumber-js';
import type { WorkspaceContext } from '../../platform/auth/access.ts';
import type { Clock } from '../../platform/clock.ts';
import { type CpuRunner, cpuTask } from '../../platform/cpu-pool.ts';
import type { Database, Executor } from '../../platform/db/schema.ts';
import { AppError, invalidField, invalidState, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { type PageRequest, toPage } from '../../platform/pagination.ts';
import { toE164 } from '../../platform/phone.ts';
import type { CallJournal } from '../calls/journal.ts';
import { requireCallAgent, requireFunds } from '../calls/preconditions.ts';
import type { CallRow } from '../calls/tables.ts';
import { findAssignedNumber } from '../phone-numbers/repo.ts';
import { isTimeZone } from './calling-window.ts';
import type * as worker from './csv-worker.ts';
import { presentAttempt, presentCampaign, presentContact } from './present.ts';
import { type CampaignRow, createCampaignsRepo } from './repo.ts';
import { resultsCsv, statsOfCampaign } from './results.ts';
import type { CampaignCreate, CampaignUpdate, UploadResult } from './schemas.ts';
import type { CampaignStatus, ContactStatus } from './tables.ts';

// Campaigns: CRUD, contact uploads and the state machine (DESIGN part 6): draft → ready (after an
// upload with contacts) → running ⇄ paused → completed, canceled from any state not terminal;
// anything else is 409 invalid_state. Dialing is the dialer's (dialer.ts); this only changes
// states and wakes it.

const parseTask = cpuTask<typeof worker.parseUpload>(new URL('./csv-worker.ts', import.meta.url), 'parseUpload');
const INSERT_BATCH = 1000;
const TERMINAL: CampaignStatus[] = ['completed', 'canceled'];

export interface CampaignsServiceDeps {
  db: Database;
  clock: Clock;
  /** The CPU pool, where uploads are parsed. */
  cpu: CpuRunner;
  /** A carrier whose calls must come from one of the workspace's numbers (not the simulation). */
  ownsCallerIds: boolean;
  journal: CallJournal;
  /** The campaign's calls still queued (the calls module reads them). */
  queuedCallsOf(campaignId: string): Promise<CallRow[]>;
  /** Wakes the dialers (call inside the transaction that made work due: NOTIFY goes out on commit). */
  announce(tx: Executor): Promise<void>;
}

export function createCampaignsService(deps: CampaignsServiceDeps) {
  const { db, clock, cpu, ownsCallerIds, journal, queuedCallsOf } = deps;
  const repo = createCampaignsRepo();

  async function campaignOf(workspaceId: string, id: string): Promise<CampaignRow> {
    const row = await repo.find(db, workspaceId, id);
    if (!row) throw notFound('campaign');
    return row;
  }

  async function present(row: CampaignRow) {
    const counts = await repo.counts(db, [row.id]);
    return presentCampaign(row, counts.get(row.id) ?? { total: 0, pending: 0, calling: 0, completed: 0, failed: 0, skipped: 0, canceled: 0 });
  }

  async function fromNumber(workspaceId: string, raw: string | null | undefined): Promise<string | null> {
    if (raw === null || raw === undefined) {
      if (ownsCallerIds) throw new AppError('no_caller_id', "No caller id: pass from_number, one of the workspace's phone numbers.");
      return null;
    }
    const number = toE164(raw);
    if (!number) throw invalidField('from_number', 'must be a possible phone number (E.164, e.g. +15550100200)');
    if (ownsCallerIds) {
      const owned = await findAssignedNumber(db, number);
      if (!owned || owned.workspace_id !== workspaceId) throw new AppError('no_caller_id', "from_number is not one of this workspace's phone numbers.");
    }
    return number;
  }

  function checkSettings(body: CampaignUpdate) {
    if (body.default_country && !isSupportedCountry(body.default_country)) throw invalidField('default_country', 'not a country libphonenumber knows');
    const window = body.calling_window;
    if (window) {
      if (!isTimeZone(window.timezone ?? 'UTC')) throw invalidField('calling_window.timezone', 'not an IANA time zone');
      if (window.start === window.end) throw invalidField('calling_window.end', 'must differ from start');
    }
  }

  const windowOf = (window: CampaignCreate['calling_window']) => (window ? JSON.stringify({ ...window, timezone: window.timezone ?? 'UTC' }) : null);

  /** Cancels the campaign's calls not dialed yet (pause, cancel); the finish hook puts their contacts back. */
  async function cancelQueuedCalls(campaignId: string) {
    for (const call of await queuedCallsOf(campaignId)) {
      await journal.finish(call, null, { status: 'canceled', endReason: 'api_hangup', durationMs: 0, onlyFrom: ['queued'] });
    }
  }

  /** Moves the campaign from one of `from` to `to` under its row lock; 409 invalid_state otherwise. */
  async function transition(ctx: WorkspaceContext, id: string, from: CampaignStatus[], to: CampaignStatus, verb: string, extra: (row: CampaignRow, tx: Executor) => Promise<Record<string, unknown>>) {
    return db.transaction().execute(async (tx) => {
      const row = await repo.lock(tx, ctx.workspaceId, id);
      if (!row) throw notFound('campaign');
      if (!from.includes(row.status)) throw invalidState(`A ${row.status} campaign cannot be ${verb}.`);
      const now = clock.now();
      const set = { status: to, updated_at: now, ...(await extra(row, tx)) };
      return tx.updateTable('campaigns').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    });
  }

  return {
    async create(ctx: WorkspaceContext, body: CampaignCreate) {
      checkSettings(body);
      await requireCallAgent(db, ctx.workspaceId, body.agent_id);
      const from = await fromNumber(ctx.workspaceId, body.from_number);
      const now = clock.now();
      const row = await db
        .insertInto('campaigns')
        .values({
          id: newId('cmp'),
          workspace_id: ctx.workspaceId,
          agent_id: body.agent_id,
          name: body.name,
          from_number: from,
          status: 'draft',
          concurrency: body.concurrency ?? 2,
          max_attempts: body.max_attempts ?? 1,
          retry_delay_minutes: body.retry_delay_minutes ?? 60,
          calling_window: windowOf(body.calling_window),
          default_country: body.default_country ?? null,
          simulation: body.simulation ? JSON.stringify(body.simulation) : null,
          variable_names: JSON.stringify([]),
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return present(row);
    },

    async list(ctx: WorkspaceContext, page: PageRequest, status?: CampaignStatus) {
      const rows = await repo.list(db, ctx.workspaceId, page, status);
      const counts = await repo.counts(db, rows.map((r) => r.id));
      return toPage(rows, page, (r) => r.id, (r) => presentCampaign(r, counts.get(r.id) ?? { total: 0, pending: 0, calling: 0, completed: 0, failed: 0, skipped: 0, canceled: 0 }));
    },

    async get(ctx: WorkspaceContext, id: string) {
      return present(await campaignOf(ctx.workspaceId, id));
    },

    async update(ctx: WorkspaceContext, id: string, body: CampaignUpdate) {
      checkSettings(body);
      if (body.agent_id) await requireCallAgent(db, ctx.workspaceId, body.agent_id);
      const from = body.from_number !== undefined ? await fromNumber(ctx.workspaceId, body.from_number) : undefined;
      const row = await db.transaction().execute(async (tx) => {
        const current = await repo.lock(tx, ctx.workspaceId, id);
        if (!current) throw notFound('campaign');
        if (TERMINAL.includes(current.status)) throw invalidState(`A ${current.status} campaign cannot be changed.`);
        const set: Record<string, unknown> = { updated_at: clock.now() };
        for (const key of ['name', 'agent_id', 'concurrency', 'max_attempts', 'retry_delay_minutes', 'default_country'] as const) if (body[key] !== undefined) set[key] = body[key];
        if (from !== undefined) set.from_number = from;
        if (body.calling_window !== undefined) set.calling_window = windowOf(body.calling_window);
        if (body.simulation !== undefined) set.simulation = body.simulation ? JSON.stringify(body.simulation) : null;
        const updated = await tx.updateTable('campaigns').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
        // More room or another window may let contacts be dialed now.
        if (updated.status === 'running') await deps.announce(tx);
        return updated;
      });
      return present(row);
    },

    async remove(ctx: WorkspaceContext, id: string) {
      await db.transaction().execute(async (tx) => {
        const row = await repo.lock(tx, ctx.workspaceId, id);
        if (!row) throw notFound('campaign');
        if (row.status === 'running') throw invalidState('A running campaign cannot be deleted: pause or cancel it first.');
        await tx.deleteFrom('campaigns').where('id', '=', id).execute();
      });
    },

    async upload(ctx: WorkspaceContext, id: string, bytes: Uint8Array): Promise<UploadResult> {
      const campaign = await campaignOf(ctx.workspaceId, id);
      if (campaign.status !== 'draft' && campaign.status !== 'ready') throw invalidState(`Contacts can be added to a draft or ready campaign only (this one is ${campaign.status}).`);
      const parsed = await cpu.run(parseTask, { bytes, defaultCountry: campaign.default_country });
      if (!parsed.ok) {
        if (parsed.status === 413) throw new AppError('payload_too_large', `The upload was refused whole: ${parsed.message}.`);
        throw invalidField('file', parsed.message);
      }
      const dnc = new Set<string>();
      for (let at = 0; at < parsed.contacts.length; at += INSERT_BATCH) {
        for (const number of await repo.doNotCall(db, ctx.workspaceId, parsed.contacts.slice(at, at + INSERT_BATCH).map((c) => c.phone))) dnc.add(number);
      }
      const callable = parsed.contacts.filter((c) => !dnc.has(c.phone));
      const accepted = await db.transaction().execute(async (tx) => {
        const row = await repo.lock(tx, ctx.workspaceId, id);
        if (!row) throw notFound('campaign');
        if (row.status !== 'draft' && row.status !== 'ready') throw invalidState(`Contacts can be added to a draft or ready campaign only (this one is ${row.status}).`);
        const now = clock.now();
        let inserted = 0;
        for (let at = 0; at < callable.length; at += INSERT_BATCH) {
          const batch = callable.slice(at, at + INSERT_BATCH).map((c) => ({
            id: newId('cnt'),
            campaign_id: id,
            workspace_id: ctx.workspaceId,
            row_number: c.row,
            phone: c.phone,
            variables: c.variables,
            timezone: c.timezone,
            status: 'pending' as ContactStatus,
            created_at: now,
            updated_at: now,
          }));
          inserted += await repo.insertContacts(tx, batch);
        }
        const names = [...new Set([...(row.variable_names as string[]), ...parsed.variableNames])];
        const status = row.status === 'draft' && inserted > 0 ? 'ready' : row.status;
        await tx.updateTable('campaigns').set({ status, variable_names: JSON.stringify(names), updated_at: now }).where('id', '=', id).execute();
        return inserted;
      });
      return { accepted, rejected: parsed.rejected, duplicates: parsed.duplicates + (callable.length - accepted), skipped_dnc: parsed.contacts.length - callable.length };
    },

    async contacts(ctx: WorkspaceContext, id: string, page: PageRequest, status?: ContactStatus) {
      await campaignOf(ctx.workspaceId, id);
      const rows = await repo.contacts(db, ctx.workspaceId, id, page, status);
      return toPage(rows, page, (r) => r.id, presentContact);
    },

    async contact(ctx: WorkspaceContext, id: string, contactId: string) {
      const row = await repo.contact(db, ctx.workspaceId, id, contactId);
      if (!row) throw notFound('contact');
      return { ...presentContact(row), attempt_history: (await repo.attempts(db, row.id)).map(presentAttempt) };
    },

    /** ready → running, or paused → running (resume). Needs money in the wallet. */
    async start(ctx: WorkspaceContext, id: string) {
      const campaign = await campaignOf(ctx.workspaceId, id);
      if (campaign.status === 'draft') throw invalidState('Upload contacts before starting the campaign.');
      await requireFunds(db, ctx.workspaceId, 'run campaigns');
      const row = await transition(ctx, id, ['ready', 'paused'], 'running', 'started', async (current, tx) => {
        await deps.announce(tx);
        return { pause_reason: null, started_at: current.started_at ?? clock.now() };
      });
      return present(row);
    },

    /** running → paused: nothing more is dialed; live calls finish, calls not dialed yet are withdrawn. */
    async pause(ctx: WorkspaceContext, id: string) {
      const row = await transition(ctx, id, ['running'], 'paused', 'paused', async () => ({ pause_reason: null }));
      await cancelQueuedCalls(id);
      return present(row);
    },

    /** Any state not terminal → canceled: contacts not called yet are canceled; live calls finish. */
    async cancel(ctx: WorkspaceContext, id: string) {
      const row = await transition(ctx, id, ['draft', 'ready', 'running', 'paused'], 'canceled', 'canceled', async (_current, tx) => {
        const now = clock.now();
        await tx.updateTable('campaign_contacts').set({ status: 'canceled', next_attempt_at: null, updated_at: now }).where('campaign_id', '=', id).where('status', '=', 'pending').execute();
        return { canceled_at: now };
      });
      await cancelQueuedCalls(id);
      return present(row);
    },

    /** The results CSV of a campaign (streamed as it is read) and the file name it is served as. */
    async results(ctx: WorkspaceContext, id: string) {
      const campaign = await campaignOf(ctx.workspaceId, id);
      return { filename: `${campaign.id}-results.csv`, csv: await resultsCsv(db, campaign) };
    },

    async stats(ctx: WorkspaceContext, id: string) {
      return statsOfCampaign(db, await campaignOf(ctx.workspaceId, id));
    },
  };
}

export type CampaignsService = ReturnType<typeof createCampaignsService>;
