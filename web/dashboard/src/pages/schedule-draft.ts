import type { CreateScheduleBody, Schedule, UpdateScheduleBody } from '../../../../sdks/typescript/src/index.ts';
import { keyValuesOf, keyValuesText, linesOf, metadataOf } from '../ui/text-lists.ts';
import { scriptText, simulationOf } from './simulation-script.ts';

// The schedule form's state: the time as a datetime-local input holds it (the browser's time
// zone, to the minute) and back to ISO 8601; variables as `name=value` lines; the sandbox caller's
// script one line per utterance. Plain functions, unit-tested on Node.

export interface ScheduleDraft {
  agent_id: string;
  to: string;
  from: string;
  /** YYYY-MM-DDTHH:MM, local time. */
  when: string;
  variables: string;
  /** JSON object text; '' for none. */
  metadata: string;
  caller_script: string;
}

export type ScheduleDraftErrors = Partial<Record<keyof ScheduleDraft, string>>;

const pad = (n: number) => String(n).padStart(2, '0');

/** A time as a datetime-local input shows it, in this machine's time zone. */
export function localInputOf(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A datetime-local value (this machine's time zone) as ISO 8601, or undefined. */
export function isoOfLocalInput(value: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value.trim())) return undefined;
  const date = new Date(value.trim());
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function newScheduleDraft(now: Date): ScheduleDraft {
  return { agent_id: '', to: '', from: '', when: localInputOf(new Date(now.getTime() + 60 * 60_000)), variables: '', metadata: '', caller_script: '' };
}

export function scheduleDraftOf(schedule: Schedule): ScheduleDraft {
  return {
    agent_id: schedule.agent_id,
    to: schedule.to,
    from: schedule.from ?? '',
    when: localInputOf(new Date(schedule.scheduled_at)),
    variables: keyValuesText(schedule.variables),
    metadata: Object.keys(schedule.metadata).length > 0 ? JSON.stringify(schedule.metadata) : '',
    caller_script: scriptText(schedule.simulation),
  };
}

function checked(draft: ScheduleDraft) {
  const errors: ScheduleDraftErrors = {};
  if (draft.agent_id === '') errors.agent_id = 'Choose the agent that makes the call';
  if (draft.to.trim() === '') errors.to = 'The number to call, e.g. +15550100200';
  const scheduledAt = isoOfLocalInput(draft.when);
  if (!scheduledAt) errors.when = 'A date and time';
  const { values, badLines } = keyValuesOf(draft.variables);
  if (badLines.length > 0) errors.variables = `Write each variable as name=value (line ${badLines.join(', ')})`;
  const metadata = metadataOf(draft.metadata);
  if (metadata.error) errors.metadata = metadata.error;
  const script = linesOf(draft.caller_script);
  return { errors, scheduledAt: scheduledAt ?? '', values, metadata: metadata.metadata, script };
}

export function scheduleCreateOf(draft: ScheduleDraft): { body: CreateScheduleBody; errors: ScheduleDraftErrors } {
  const { errors, scheduledAt, values, metadata, script } = checked(draft);
  const body: CreateScheduleBody = { agent_id: draft.agent_id, to: draft.to.trim(), scheduled_at: scheduledAt, variables: values };
  if (metadata) body.metadata = metadata;
  if (draft.from.trim() !== '') body.from = draft.from.trim();
  if (script.length > 0) body.simulation = { caller_script: script };
  return { body, errors };
}

/** The PATCH body: every field, so clearing one (the caller id, the script) clears it; what the form does not show of the simulation is kept. */
export function scheduleUpdateOf(draft: ScheduleDraft, schedule: Schedule): { body: UpdateScheduleBody; errors: ScheduleDraftErrors } {
  const { errors, scheduledAt, values, metadata, script } = checked(draft);
  const body: UpdateScheduleBody = {
    agent_id: draft.agent_id,
    to: draft.to.trim(),
    from: draft.from.trim() === '' ? null : draft.from.trim(),
    scheduled_at: scheduledAt,
    variables: values,
    metadata: metadata ?? {},
    simulation: simulationOf(script, schedule.simulation),
  };
  return { body, errors };
}

/** The API's field paths as the draft's field names. */
export function scheduleDraftField(path: string): keyof ScheduleDraft | undefined {
  const head = path.split('.')[0];
  if (head === 'scheduled_at') return 'when';
  if (head === 'simulation') return 'caller_script';
  return ['agent_id', 'to', 'from', 'variables', 'metadata'].includes(head) ? (head as keyof ScheduleDraft) : undefined;
}
