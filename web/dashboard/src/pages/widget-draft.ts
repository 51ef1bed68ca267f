import type { UpdateWidgetBody, Widget } from '../../../../sdks/typescript/src/index.ts';
import { HEX_COLOR } from '../ui/color.ts';
import { linesOf } from '../ui/text-lists.ts';

// The widget editor's state: every field of a widget as the inputs hold it, and back to the
// PATCH body (an empty greeting as null: the agent's first message; origins one per line). The
// preview renders the draft, so it follows every keystroke. Plain functions, unit-tested on Node.

export type WidgetMode = Widget['mode'];
export type WidgetPosition = Widget['theme']['position'];
export const WIDGET_MODES: readonly { value: WidgetMode; label: string }[] = [
  { value: 'chat', label: 'Chat' },
  { value: 'voice', label: 'Voice' },
  { value: 'both', label: 'Chat and voice' },
];
export const WIDGET_POSITIONS: readonly { value: WidgetPosition; label: string }[] = [
  { value: 'bottom-right', label: 'Bottom right' },
  { value: 'bottom-left', label: 'Bottom left' },
];

export interface WidgetDraft {
  name: string;
  agent_id: string;
  mode: WidgetMode;
  title: string;
  greeting: string;
  primary_color: string;
  position: WidgetPosition;
  allowed_origins: string;
}

export type WidgetDraftErrors = Partial<Record<keyof WidgetDraft, string>>;

export function widgetDraftOf(widget: Widget): WidgetDraft {
  return {
    name: widget.name,
    agent_id: widget.agent_id,
    mode: widget.mode,
    title: widget.theme.title,
    greeting: widget.theme.greeting ?? '',
    primary_color: widget.theme.primary_color,
    position: widget.theme.position,
    allowed_origins: widget.allowed_origins.join('\n'),
  };
}

/** scheme://host[:port], nothing after. */
const ORIGIN = /^https?:\/\/[^\s/?#]+$/;

export function widgetUpdateOf(draft: WidgetDraft): { body: UpdateWidgetBody; errors: WidgetDraftErrors } {
  const errors: WidgetDraftErrors = {};
  if (draft.name.trim() === '') errors.name = 'Name the widget';
  if (draft.title.trim() === '') errors.title = 'The title shown at the top of the panel';
  if (!HEX_COLOR.test(draft.primary_color.trim())) errors.primary_color = 'A colour as #rrggbb, e.g. #0e7490';
  const origins = linesOf(draft.allowed_origins);
  const bad = origins.filter((origin) => !ORIGIN.test(origin));
  if (bad.length > 0) errors.allowed_origins = `Not an origin (scheme://host[:port]): ${bad.join(', ')}`;
  const body: UpdateWidgetBody = {
    name: draft.name.trim(),
    agent_id: draft.agent_id,
    mode: draft.mode,
    theme: { title: draft.title.trim(), greeting: draft.greeting.trim() === '' ? null : draft.greeting.trim(), primary_color: draft.primary_color.trim(), position: draft.position },
    allowed_origins: origins,
  };
  return { body, errors };
}

/** The API's field paths (`theme.primary_color`) as the draft's field names. */
export function widgetDraftField(path: string): keyof WidgetDraft | undefined {
  const name = path.replace(/^theme\./, '').replace(/\.\d+$/, '');
  return ['name', 'agent_id', 'mode', 'title', 'greeting', 'primary_color', 'position', 'allowed_origins'].includes(name) ? (name as keyof WidgetDraft) : undefined;
}

/** What the panel greets with, as the platform decides: the greeting, else the agent's first message when it needs no {{variables}}, else a line naming the agent. */
export function greetingShown(draft: WidgetDraft, agent: { name: string; first_message: string | null } | undefined): string {
  if (draft.greeting.trim()) return draft.greeting.trim();
  const first = agent?.first_message?.trim();
  if (first && !/\{\{.*?\}\}/.test(first)) return first;
  return `Hello, this is ${agent?.name ?? 'your agent'}. How can I help you today?`;
}
