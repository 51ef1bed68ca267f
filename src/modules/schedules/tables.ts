import type { Json, Timestamp } from '../../platform/db/foundation-tables.ts';
import type { CallSimulation } from '../calls/tables.ts';

// Tables of schedules (migration 0011).

export const SCHEDULE_STATUSES = ['scheduled', 'dispatched', 'canceled', 'failed'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

export interface SchedulesTable {
  id: string;
  workspace_id: string;
  agent_id: string;
  to_number: string;
  /** The caller id asked for; null: the default (the sandbox's number). */
  from_number: string | null;
  scheduled_at: Timestamp;
  variables: Json<Record<string, string>>;
  metadata: Json<Record<string, unknown>>;
  simulation: Json<CallSimulation> | null;
  status: ScheduleStatus;
  /** The call placed when it fired. */
  call_id: string | null;
  /** Fired more than LATE_AFTER_MS after scheduled_at (the worker was not running then). */
  late: boolean;
  /** When it fired (dispatched or failed). */
  dispatched_at: Timestamp | null;
  canceled_at: Timestamp | null;
  /** Why a failed schedule could not be placed. */
  error: Json<{ code: string; message: string }> | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ScheduleTables {
  schedules: SchedulesTable;
}
