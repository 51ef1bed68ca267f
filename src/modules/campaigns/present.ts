import type { Static } from 'typebox';
import type { CallSimulation } from '../calls/tables.ts';
import type { CallingWindow } from './tables.ts';
import type { AttemptRow, CampaignRow, ContactCounts, ContactRow } from './repo.ts';
import type { Attempt, Campaign, Contact } from './schemas.ts';

// Rows as the API shows them.

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

export function statsOf(counts: ContactCounts) {
  return {
    total: counts.total,
    pending: counts.pending,
    in_progress: counts.calling,
    completed: counts.completed,
    failed: counts.failed,
    skipped: counts.skipped,
    canceled: counts.canceled,
  };
}

export function presentCampaign(row: CampaignRow, counts: ContactCounts): Campaign {
  return {
    id: row.id,
    name: row.name,
    agent_id: row.agent_id,
    from_number: row.from_number,
    status: row.status,
    pause_reason: row.pause_reason,
    concurrency: row.concurrency,
    max_attempts: row.max_attempts,
    retry_delay_minutes: row.retry_delay_minutes,
    calling_window: row.calling_window as CallingWindow | null,
    default_country: row.default_country,
    simulation: row.simulation as CallSimulation | null,
    stats: statsOf(counts),
    started_at: iso(row.started_at),
    completed_at: iso(row.completed_at),
    created_at: iso(row.created_at) as string,
    updated_at: iso(row.updated_at) as string,
  };
}

export function presentContact(row: ContactRow): Static<typeof Contact> {
  return {
    id: row.id,
    campaign_id: row.campaign_id,
    row: row.row_number,
    phone: row.phone,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: iso(row.next_attempt_at),
    call_id: row.call_id,
    timezone: row.timezone,
    variables: row.variables as Record<string, string>,
    created_at: iso(row.created_at) as string,
    updated_at: iso(row.updated_at) as string,
  };
}

export function presentAttempt(row: AttemptRow): Static<typeof Attempt> {
  return { attempt: row.attempt, call_id: row.call_id, status: row.status, end_reason: row.end_reason, created_at: iso(row.created_at) as string, ended_at: iso(row.ended_at) };
}
