import type { Timestamp } from '../../platform/db/foundation-tables.ts';

// The demo's setup row (migration 0013): which workspace and agent the demo runs on.

export interface DemoSetupTable {
  key: string;
  workspace_id: string;
  agent_id: string;
  created_at: Timestamp;
}

export interface DemoTables {
  demo_setup: DemoSetupTable;
}
