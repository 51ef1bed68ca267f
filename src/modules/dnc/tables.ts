import type { Timestamp } from '../../platform/db/foundation-tables.ts';

// The do-not-call list (migration 0006).

export interface DncNumbersTable {
  workspace_id: string;
  number: string;
  reason: string | null;
  created_at: Timestamp;
}

export interface DncTables {
  dnc_numbers: DncNumbersTable;
}
