import { type Selectable, sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import type { CallsTable } from '../calls/tables.ts';
import type { CampaignRow, ContactRow } from './repo.ts';

// The campaign dialer's statements, apart from its loop (dialer.ts).

/**
 * Up to `limit` running campaigns, each locked for this dialer (SKIP LOCKED: one another dialer
 * holds is left to it), in id order from the first after `afterId`, round to the first: a pass
 * starts where the last one stopped, so with more running campaigns than a pass takes, each is
 * reached in turn (a fixed order would give the same `limit` campaigns every pass).
 */
export async function lockRunningCampaigns(tx: Executor, limit: number, afterId = ''): Promise<CampaignRow[]> {
  const rows = await sql<CampaignRow>`select * from campaigns where status = 'running' order by id <= ${afterId}, id limit ${limit} for update skip locked`.execute(tx);
  return rows.rows;
}

/** The time zones of the campaign's contacts waiting for a call (null: the window's own zone). */
export async function pendingTimeZones(tx: Executor, campaignId: string): Promise<Array<string | null>> {
  const rows = await sql<{ timezone: string | null }>`select distinct timezone from campaign_contacts where campaign_id = ${campaignId} and status = 'pending'`.execute(tx);
  return rows.rows.map((r) => r.timezone);
}

/**
 * Picks the contacts to dial now, as many as the campaign has room for: its calls not ended yet
 * (queued, ringing, in progress) are counted in the same statement that locks the contacts, under
 * the campaign's row lock, so `concurrency` holds across dialers, workers and instances.
 * `zones`: only contacts of these time zones (the calling window is open there); `nullZone`:
 * contacts without a zone of their own too. Undefined zones: no calling window.
 */
export async function pickDueContacts(
  tx: Executor,
  campaign: CampaignRow,
  now: Date,
  window?: { zones: string[]; nullZone: boolean },
): Promise<ContactRow[]> {
  const inWindow = !window
    ? sql`true`
    : sql`(${window.zones.length > 0 ? sql`timezone in (${sql.join(window.zones)})` : sql`false`} or ${window.nullZone ? sql`timezone is null` : sql`false`})`;
  const rows = await sql<ContactRow>`
    with live as (
      select count(*)::integer as n from calls where campaign_id = ${campaign.id} and status in ('queued', 'ringing', 'in_progress')
    )
    select * from campaign_contacts
    where campaign_id = ${campaign.id} and status = 'pending' and (next_attempt_at is null or next_attempt_at <= ${now}) and ${inWindow}
    order by id
    limit greatest(0, ${campaign.concurrency}::integer - (select n from live))
    for update skip locked`.execute(tx);
  return rows.rows;
}

/** The contact's next attempt: calling, under `callId` (the attempt row's unique index refuses a second call for one attempt). */
export async function beginAttempt(tx: Executor, contact: ContactRow, callId: string, now: Date): Promise<void> {
  const attempt = contact.attempts + 1;
  await tx
    .updateTable('campaign_contacts')
    .set({ status: 'calling', attempts: attempt, call_id: callId, next_attempt_at: null, updated_at: now })
    .where('id', '=', contact.id)
    .where('status', '=', 'pending')
    .execute();
  await tx.insertInto('campaign_attempts').values({ call_id: callId, contact_id: contact.id, campaign_id: contact.campaign_id, attempt, status: 'queued', created_at: now }).execute();
}

export type CallRow = Selectable<CallsTable>;
