import { csvStream } from '../../platform/csv.ts';
import { AppError, invalidState, notFound } from '../../platform/errors.ts';
import { type PageRequest, toPage } from '../../platform/pagination.ts';
import { toE164 } from '../../platform/phone.ts';
import { type CallRow, type CallsRepo, presentCall } from './repo.ts';
import type { CallListQuery } from './schemas.ts';
import type { LinkSigner } from './signed-links.ts';

// Reading calls, for the read routes (routes/read.ts): lists, the CSV export, one call, its state
// history, the call a signed link names, and DELETE, which keeps the row and removes its content.
// Beside them, the rows other modules read (handed to them by the composition root or with the
// calls module): a voice session's call, a carrier's call, a campaign's queued calls, a number's live call.

export const EXPORT_MAX_ROWS = 10_000;
const LIVE = ['queued', 'ringing', 'in_progress'];

export interface CallReadsDeps {
  repo: CallsRepo;
  links: LinkSigner;
  /** Deletes a call's content (recording blob, transcript). */
  removeContent(workspaceId: string, call: CallRow): Promise<void>;
}

/** The list's filters, numbers normalised to E.164 when they can be. */
function filtersOf(query: Omit<CallListQuery, 'limit' | 'cursor'> & { limit?: number; cursor?: string }) {
  const { limit: _limit, cursor: _cursor, ...filters } = query;
  for (const field of ['from', 'to'] as const) {
    if (filters[field]) filters[field] = toE164(filters[field]) ?? filters[field];
  }
  return filters;
}

export function createCallReads(deps: CallReadsDeps) {
  const { repo, links } = deps;
  const present = (row: CallRow) => presentCall(row, links);

  async function callOf(workspaceId: string, id: string): Promise<CallRow> {
    const row = await repo.get(workspaceId, id);
    if (!row) throw notFound('call');
    return row;
  }

  return {
    present,
    callOf,

    /** A call row by id alone, any workspace: for a module holding the id on a row of its own (a voice session's call). */
    row: (id: string) => repo.getAny(id),
    /** A carrier's call, by our id, else by the carrier's. */
    carrierCall: (provider: string, ids: { callId?: string; carrierCallId?: string }) => repo.carrierCall(provider, ids.callId, ids.carrierCallId),
    /** A campaign's calls still queued (withdrawn on pause and cancel). */
    queuedOfCampaign: (campaignId: string) => repo.queuedOfCampaign(campaignId),
    /** Whether a call from or to the number is live in the workspace (a number is not released under one). */
    hasLiveCallOn: (workspaceId: string, number: string) => repo.hasLiveCallOn(workspaceId, number),

    /** The call a signed link names, in any workspace: `path` is the path the link signs. */
    async signedCallOf(path: string, id: string, expires: string | undefined, signature: string | undefined): Promise<CallRow> {
      if (!links.verify(path, expires, signature)) throw new AppError('unauthorized', 'the link is expired or its signature is not valid');
      const row = await repo.getAny(id);
      if (!row) throw notFound('call');
      return row;
    },

    async list(workspaceId: string, query: CallListQuery, page: PageRequest) {
      const rows = await repo.list(workspaceId, filtersOf(query), page);
      return toPage(rows, page, (r) => r.id, present);
    },

    /** The list's calls as CSV, newest first, at most EXPORT_MAX_ROWS: a column per extracted field any of them has. */
    async exportCsv(workspaceId: string, query: Omit<CallListQuery, 'limit' | 'cursor'>) {
      const rows = await repo.list(workspaceId, filtersOf(query), { limit: EXPORT_MAX_ROWS - 1 });
      const fields = [...new Set(rows.flatMap((r) => Object.keys(r.extracted as object)))].sort();
      const columns = ['id', 'created_at', 'direction', 'from', 'to', 'status', 'end_reason', 'duration_seconds', 'cost_usd', 'agent_id', 'campaign_id', ...fields.map((f) => `extracted.${f}`)];
      const csv = csvStream(columns);
      for (const row of rows) {
        const call = present(row);
        const extracted = row.extracted as Record<string, unknown>;
        csv.write([
          call.id, call.created_at, call.direction, call.from ?? '', call.to ?? '', call.status, call.end_reason ?? '', call.duration_seconds, call.cost_usd, call.agent_id, call.campaign_id ?? '',
          ...fields.map((f) => (extracted[f] === null || extracted[f] === undefined ? '' : typeof extracted[f] === 'object' ? JSON.stringify(extracted[f]) : String(extracted[f]))),
        ]);
      }
      csv.end();
      return csv;
    },

    async get(workspaceId: string, id: string) {
      return present(await callOf(workspaceId, id));
    },

    /** The call's state history, oldest first. */
    async events(workspaceId: string, id: string) {
      const row = await callOf(workspaceId, id);
      const history = await repo.statusHistory(row.id);
      return { data: history.map((h) => ({ status: h.status, at: new Date(h.at).toISOString() })) };
    },

    /** Deletes the call's recording and transcript; the row stays. 409 while the call is live. */
    async removeContent(workspaceId: string, id: string) {
      const row = await callOf(workspaceId, id);
      if (LIVE.includes(row.status)) throw invalidState('the call has not ended yet; hang it up first');
      await deps.removeContent(workspaceId, row);
    },
  };
}

export type CallReads = ReturnType<typeof createCallReads>;
