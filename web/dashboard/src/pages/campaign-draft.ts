import type { CallingWindow, Campaign, CreateCampaignBody, UpdateCampaignBody } from '../../../../sdks/typescript/src/index.ts';
import { linesOf, wholeNumber } from '../ui/text-lists.ts';
import { scriptText, simulationOf } from './simulation-script.ts';

// The campaign form's state (new or changed): every setting the API offers as the strings the
// inputs hold, and back to the create or PATCH body (numbers checked against the API's ranges, the calling window
// only when asked for, the sandbox caller's script one line per utterance). Plain functions:
// unit-tested on Node (test/dashboard/campaigns-logic.test.ts).

export type Weekday = CallingWindow['days'][number];
export const WEEKDAYS: readonly { value: Weekday; label: string }[] = [
  { value: 'mon', label: 'Monday' },
  { value: 'tue', label: 'Tuesday' },
  { value: 'wed', label: 'Wednesday' },
  { value: 'thu', label: 'Thursday' },
  { value: 'fri', label: 'Friday' },
  { value: 'sat', label: 'Saturday' },
  { value: 'sun', label: 'Sunday' },
];

export interface CampaignDraft {
  name: string;
  agent_id: string;
  /** '' : no caller id of its own (the sandbox's). */
  from_number: string;
  concurrency: string;
  max_attempts: string;
  retry_delay_minutes: string;
  default_country: string;
  window_enabled: boolean;
  window_days: Weekday[];
  window_start: string;
  window_end: string;
  window_timezone: string;
  caller_script: string;
}

export type CampaignDraftErrors = Partial<Record<keyof CampaignDraft, string>>;

export function newCampaignDraft(timezone = 'UTC'): CampaignDraft {
  return {
    name: '',
    agent_id: '',
    from_number: '',
    concurrency: '2',
    max_attempts: '1',
    retry_delay_minutes: '60',
    default_country: '',
    window_enabled: false,
    window_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
    window_start: '09:00',
    window_end: '17:00',
    window_timezone: timezone,
    caller_script: '',
  };
}

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

function callingWindowOf(draft: CampaignDraft, errors: CampaignDraftErrors): CallingWindow | null {
  if (!draft.window_enabled) return null;
  if (draft.window_days.length === 0) errors.window_days = 'Pick at least one day';
  if (!HHMM.test(draft.window_start.trim())) errors.window_start = 'A time as HH:MM, e.g. 09:00';
  if (!HHMM.test(draft.window_end.trim())) errors.window_end = 'A time as HH:MM, e.g. 17:00';
  if (draft.window_timezone.trim() === '') errors.window_timezone = 'A time zone, e.g. Europe/Paris';
  const order = WEEKDAYS.map((d) => d.value);
  return {
    days: [...draft.window_days].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
    start: draft.window_start.trim(),
    end: draft.window_end.trim(),
    timezone: draft.window_timezone.trim(),
  };
}

/** The create body, or the fields the form must fix first. */
export function campaignCreateOf(draft: CampaignDraft): { body: CreateCampaignBody; errors: CampaignDraftErrors } {
  const errors: CampaignDraftErrors = {};
  if (draft.name.trim() === '') errors.name = 'Name the campaign';
  if (draft.agent_id === '') errors.agent_id = 'Choose the agent that makes the calls';
  const concurrency = wholeNumber(draft.concurrency, 1, 50);
  if (concurrency === undefined) errors.concurrency = 'A whole number from 1 to 50';
  const maxAttempts = wholeNumber(draft.max_attempts, 1, 10);
  if (maxAttempts === undefined) errors.max_attempts = 'A whole number from 1 to 10';
  const retryDelay = wholeNumber(draft.retry_delay_minutes, 0, 10_080);
  if (retryDelay === undefined) errors.retry_delay_minutes = 'A whole number of minutes from 0 to 10080 (a week)';
  const country = draft.default_country.trim().toUpperCase();
  if (country !== '' && !/^[A-Z]{2}$/.test(country)) errors.default_country = 'Two letters, e.g. US';
  const script = linesOf(draft.caller_script);
  const body: CreateCampaignBody = {
    name: draft.name.trim(),
    agent_id: draft.agent_id,
    from_number: draft.from_number === '' ? null : draft.from_number,
    concurrency,
    max_attempts: maxAttempts,
    retry_delay_minutes: retryDelay,
    calling_window: callingWindowOf(draft, errors),
    default_country: country === '' ? null : country,
    simulation: script.length > 0 ? { caller_script: script } : null,
  };
  return { body, errors };
}

/** A campaign's settings in the form, to change them. */
export function campaignDraftOf(campaign: Campaign): CampaignDraft {
  const window = campaign.calling_window;
  const fresh = newCampaignDraft(window?.timezone);
  return {
    name: campaign.name,
    agent_id: campaign.agent_id,
    from_number: campaign.from_number ?? '',
    concurrency: String(campaign.concurrency),
    max_attempts: String(campaign.max_attempts),
    retry_delay_minutes: String(campaign.retry_delay_minutes),
    default_country: campaign.default_country ?? '',
    window_enabled: window !== null,
    window_days: window ? [...window.days] : fresh.window_days,
    window_start: window?.start ?? fresh.window_start,
    window_end: window?.end ?? fresh.window_end,
    window_timezone: fresh.window_timezone,
    caller_script: scriptText(campaign.simulation),
  };
}

/** The PATCH body: every setting, what the form does not show of the simulation kept as it was. */
export function campaignUpdateOf(draft: CampaignDraft, campaign: Campaign): { body: UpdateCampaignBody; errors: CampaignDraftErrors } {
  const { body, errors } = campaignCreateOf(draft);
  return { body: { ...body, simulation: simulationOf(linesOf(draft.caller_script), campaign.simulation) }, errors };
}

/** The API's field paths (`calling_window.start`) as the draft's field names. */
export function campaignDraftField(path: string): keyof CampaignDraft | undefined {
  const name = path.replace(/^calling_window\.?/, 'window_').replace(/^window_$/, 'window_enabled').replace(/^simulation.*/, 'caller_script').replace(/\.\d+$/, '');
  return name in newCampaignDraft() ? (name as keyof CampaignDraft) : undefined;
}

/** A calling window in words: "Mon–Fri 09:00–17:00 (Europe/Paris)". */
export function describeWindow(window: CallingWindow | null): string {
  if (!window) return 'Any time';
  const names = window.days.map((day) => day.charAt(0).toUpperCase() + day.slice(1));
  return `${names.join(', ')} ${window.start}–${window.end} (${window.timezone})`;
}
