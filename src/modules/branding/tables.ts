import type { Timestamp } from '../../platform/db/foundation-tables.ts';

// White-label branding (migration 0012): one per workspace, its domain unique across workspaces.

export interface BrandingsTable {
  workspace_id: string;
  /** Lower-case host name, unique across workspaces. */
  domain: string;
  name: string;
  logo_url: string | null;
  favicon_url: string | null;
  primary_color: string;
  accent_color: string;
  support_email: string | null;
  support_url: string | null;
  hide_powered_by: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface BrandingTables {
  brandings: BrandingsTable;
}
