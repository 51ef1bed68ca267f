import type { Database } from '../../platform/db/schema.ts';
import { microsToUsd } from '../../platform/money.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { Call, CallListQuery } from './schemas.ts';
import type { CallRow, TranscriptEntry } from './tables.ts';

// Reads of calls (the journal is the only writer), workspace-scoped, and the API view of a row.

export type { CallRow };

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

export interface CallLinkSigner {
  sign(path: string): string;
}

/** The API object of a call; links are signed for 7 days; a deleted call shows no content. */
export function presentCall(row: CallRow, links: CallLinkSigner): Call {
  const deleted = row.content_deleted_at !== null;
  return {
    id: row.id,
    agent_id: row.agent_id,
    direction: row.direction,
    from: row.from_number,
    to: row.to_number,
    status: row.status,
    end_reason: row.end_reason,
    started_at: iso(row.started_at),
    answered_at: iso(row.answered_at),
    ended_at: iso(row.ended_at),
    duration_ms: row.duration_ms,
    duration_seconds: row.billed_seconds,
    cost_usd: microsToUsd(Number(row.cost_micros)),
    transcript: deleted ? [] : (row.transcript as TranscriptEntry[]),
    extracted: row.extracted as Record<string, unknown>,
    variables: row.variables as Record<string, string>,
    metadata: row.metadata as Record<string, unknown>,
    recording_url: !deleted && row.recording_key ? links.sign(`/v1/calls/${row.id}/recording.mp3`) : null,
    recording_status: row.recording_status,
    recording_error: row.recording_error,
    analysis_status: row.analysis_status,
    analysis_error: row.analysis_error,
    transcript_url: deleted ? null : links.sign(`/v1/calls/${row.id}/transcript`),
    campaign_id: row.campaign_id,
    schedule_id: row.schedule_id,
    transferred_to: row.transferred_to,
    error: row.error as Call['error'],
    latency: row.latency as Call['latency'],
    created_at: new Date(row.created_at).toISOString(),
  };
}

export function createCallsRepo(db: Database) {
  return {
    get(workspaceId: string, id: string): Promise<CallRow | undefined> {
      return db.selectFrom('calls').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },

    /** Newest first; `limit + 1` rows (see toPage). `to`/`from` are already E.164. */
    list(workspaceId: string, filters: Omit<CallListQuery, 'limit' | 'cursor'>, page: PageRequest): Promise<CallRow[]> {
      let query = db.selectFrom('calls').selectAll().where('workspace_id', '=', workspaceId);
      if (filters.agent_id) query = query.where('agent_id', '=', filters.agent_id);
      if (filters.status) query = query.where('status', '=', filters.status);
      if (filters.direction) query = query.where('direction', '=', filters.direction);
      if (filters.campaign_id) query = query.where('campaign_id', '=', filters.campaign_id);
      if (filters.from) query = query.where('from_number', '=', filters.from);
      if (filters.to) query = query.where('to_number', '=', filters.to);
      if (filters.created_after) query = query.where('created_at', '>', new Date(filters.created_after));
      if (filters.created_before) query = query.where('created_at', '<', new Date(filters.created_before));
      if (page.after) query = query.where('id', '<', page.after);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },

    /** By id alone: only for requests that proved access another way (a signed link). */
    getAny(id: string): Promise<CallRow | undefined> {
      return db.selectFrom('calls').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** A carrier's call, by our id, else by the carrier's (the carrier's webhooks name either). */
    carrierCall(provider: string, callId: string | undefined, carrierCallId: string | undefined): Promise<CallRow | undefined> {
      let query = db.selectFrom('calls').selectAll().where('provider', '=', provider);
      if (callId) query = query.where('id', '=', callId);
      else if (carrierCallId) query = query.where('provider_call_id', '=', carrierCallId);
      else return Promise.resolve(undefined);
      return query.executeTakeFirst();
    },

    /** A campaign's calls still queued (not dialed yet). */
    queuedOfCampaign(campaignId: string): Promise<CallRow[]> {
      return db.selectFrom('calls').selectAll().where('campaign_id', '=', campaignId).where('status', '=', 'queued').execute();
    },

    /** Whether a call from or to this number is live (ringing or in progress) in the workspace. */
    async hasLiveCallOn(workspaceId: string, number: string): Promise<boolean> {
      const row = await db
        .selectFrom('calls')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('status', 'in', ['ringing', 'in_progress'])
        .where((eb) => eb.or([eb('from_number', '=', number), eb('to_number', '=', number)]))
        .executeTakeFirst();
      return row !== undefined;
    },

    /** DELETE: the row stays, its recording and transcript go. */
    async clearContent(workspaceId: string, id: string, now: Date) {
      await db
        .updateTable('calls')
        .set({ transcript: JSON.stringify([]), recording_key: null, recording_bytes: null, content_deleted_at: now, updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .execute();
    },

    statusHistory(callId: string) {
      return db.selectFrom('call_status_events').select(['status', 'at']).where('call_id', '=', callId).orderBy('seq').execute();
    },
  };
}

export type CallsRepo = ReturnType<typeof createCallsRepo>;
