import type { Json, Timestamp } from '../../platform/db/foundation-tables.ts';

// Tables of widgets (migration 0012). Widget conversations live in
// agent_conversations (channel `widget`, widget_id, visitor_id).

export const WIDGET_MODES = ['chat', 'voice', 'both'] as const;
export type WidgetMode = (typeof WIDGET_MODES)[number];

export const WIDGET_POSITIONS = ['bottom-right', 'bottom-left'] as const;

export interface WidgetThemeColumn {
  title: string;
  greeting: string | null;
  primary_color: string;
  position: (typeof WIDGET_POSITIONS)[number];
}

export interface WidgetsTable {
  id: string;
  workspace_id: string;
  agent_id: string;
  name: string;
  mode: WidgetMode;
  theme: Json<WidgetThemeColumn>;
  /** Origins (`scheme://host[:port]`) whose pages may use the widget; empty = any. */
  allowed_origins: Json<string[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Deleted widgets keep their row so their conversations still name them; reads skip them. */
  deleted_at: Timestamp | null;
}

export interface WidgetTables {
  widgets: WidgetsTable;
}
