import type { Generated } from 'kysely';
import type { Json, Timestamp } from '../../platform/db/foundation-tables.ts';
import type { CallSimulation, CallStatus, EndReason } from '../calls/tables.ts';

// Tables of campaigns (migration 0010): the campaign, its contacts and each contact's dial attempts.

export const CAMPAIGN_STATUSES = ['draft', 'ready', 'running', 'paused', 'completed', 'canceled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/**
 * pending: waiting for its first or next attempt (next_attempt_at, the calling window);
 * calling: a call of it is queued or live; completed: reached (completed, transferred, voicemail);
 * failed: its last attempt failed; skipped: on the do-not-call list when its turn came;
 * canceled: the campaign was canceled before it was done.
 */
export const CONTACT_STATUSES = ['pending', 'calling', 'completed', 'failed', 'skipped', 'canceled'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface CallingWindow {
  days: Weekday[];
  /** HH:MM, local time of the contact. */
  start: string;
  /** HH:MM; before `start`, the window wraps past midnight. */
  end: string;
  /** IANA zone for contacts without a timezone of their own. */
  timezone: string;
}

export interface CampaignsTable {
  id: string;
  workspace_id: string;
  agent_id: string;
  name: string;
  from_number: string | null;
  status: CampaignStatus;
  concurrency: number;
  max_attempts: number;
  retry_delay_minutes: number;
  calling_window: Json<CallingWindow> | null;
  default_country: string | null;
  simulation: Json<CallSimulation> | null;
  /** Variable columns of every upload, in first-seen order (the results CSV's columns). */
  variable_names: Json<string[]>;
  /** Why the dialer paused the campaign (insufficient_balance); null when paused by the API. */
  pause_reason: string | null;
  started_at: Timestamp | null;
  completed_at: Timestamp | null;
  canceled_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CampaignContactsTable {
  id: string;
  campaign_id: string;
  workspace_id: string;
  /** The line of the upload the contact came from (the header is line 1). */
  row_number: number;
  phone: string;
  variables: Json<Record<string, string>>;
  timezone: string | null;
  status: ContactStatus;
  attempts: Generated<number>;
  next_attempt_at: Timestamp | null;
  /** The call of the latest attempt. */
  call_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CampaignAttemptsTable {
  call_id: string;
  contact_id: string;
  campaign_id: string;
  attempt: number;
  /** `queued` until the call ends, then the call's terminal status. */
  status: CallStatus;
  end_reason: EndReason | null;
  created_at: Timestamp;
  ended_at: Timestamp | null;
}

export interface CampaignTables {
  campaigns: CampaignsTable;
  campaign_contacts: CampaignContactsTable;
  campaign_attempts: CampaignAttemptsTable;
}
