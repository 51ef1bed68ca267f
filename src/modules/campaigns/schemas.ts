import { type Static, Type } from 'typebox';
import { ListQuery, Nullable, NullableTimestamp, Timestamp } from '../../platform/http/schemas.ts';
import { idPattern } from '../../platform/ids.ts';
import { Simulation } from '../calls/schemas-control.ts';
import { CALL_STATUSES } from '../calls/tables.ts';
import { CAMPAIGN_STATUSES, CONTACT_STATUSES, WEEKDAYS } from './tables.ts';

// Campaigns (DESIGN part 6): the campaign, its upload answer, contacts with their attempts, stats.

const HHMM = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, 24-hour', examples: ['09:00'] });
const PhoneNumber = Type.String({ minLength: 3, maxLength: 32, description: 'Phone number, normalised to E.164', examples: ['+15550100001'] });

const windowFields = {
  days: Type.Array(Type.Enum(WEEKDAYS), { minItems: 1, maxItems: 7, uniqueItems: true, examples: [['mon', 'tue', 'wed', 'thu', 'fri']] }),
  start: HHMM,
  end: { ...HHMM, description: 'HH:MM; an end before the start wraps past midnight (the hours after midnight belong to the day the window opened)' },
};
const timezone = Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone for contacts without a timezone column', examples: ['Europe/Paris'] });

/** The window as a campaign holds it: its zone always set. */
export const CallingWindow = Type.Object(
  { ...windowFields, timezone },
  { additionalProperties: false, title: 'CallingWindow', description: "When contacts may be called, in each contact's own time zone" },
);

/**
 * The window as it is written: its zone may be left out (UTC). Optional, not a `default`: the
 * window sits in a nullable `anyOf`, inside which Ajv fills no default.
 */
export const CallingWindowInput = Type.Object(
  { ...windowFields, timezone: Type.Optional({ ...timezone, description: 'IANA time zone for contacts without a timezone column; UTC when left out' }) },
  { additionalProperties: false, title: 'CallingWindowInput', description: "When contacts may be called, in each contact's own time zone" },
);

const settings = {
  agent_id: Type.String({ minLength: 1, maxLength: 100 }),
  from_number: Nullable(PhoneNumber),
  concurrency: Type.Integer({ minimum: 1, maximum: 50, default: 2, description: 'Live calls of this campaign at most (the workspace limit applies too)' }),
  max_attempts: Type.Integer({ minimum: 1, maximum: 10, default: 1, description: 'Dial attempts per contact; busy and no-answer are retried' }),
  retry_delay_minutes: Type.Integer({ minimum: 0, maximum: 10_080, default: 60, description: 'Wait before retrying a busy or unanswered contact (0: at once)' }),
  calling_window: Nullable(CallingWindowInput),
  default_country: Nullable(Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166 country for numbers written without +country code', examples: ['US'] })),
  simulation: Nullable(Simulation),
};

export const CampaignCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    agent_id: settings.agent_id,
    from_number: Type.Optional(settings.from_number),
    concurrency: Type.Optional(settings.concurrency),
    max_attempts: Type.Optional(settings.max_attempts),
    retry_delay_minutes: Type.Optional(settings.retry_delay_minutes),
    calling_window: Type.Optional(settings.calling_window),
    default_country: Type.Optional(settings.default_country),
    simulation: Type.Optional(settings.simulation),
  },
  { additionalProperties: false },
);
export type CampaignCreate = Static<typeof CampaignCreate>;

export const CampaignUpdate = Type.Object(Type.Partial(Type.Object({ name: CampaignCreate.properties.name, ...settings })).properties, { additionalProperties: false, minProperties: 1 });
export type CampaignUpdate = Static<typeof CampaignUpdate>;

export const CampaignStats = Type.Object(
  {
    total: Type.Integer(),
    pending: Type.Integer({ description: 'Waiting for a first or next attempt' }),
    in_progress: Type.Integer({ description: 'A call queued or live' }),
    completed: Type.Integer({ description: 'Reached (completed, transferred or voicemail)' }),
    failed: Type.Integer({ description: 'Failed after their last attempt' }),
    skipped: Type.Integer({ description: 'On the do-not-call list when their turn came' }),
    canceled: Type.Integer(),
  },
  { title: 'CampaignStats' },
);

export const Campaign = Type.Object(
  {
    id: Type.String({ examples: ['cmp_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    name: Type.String(),
    agent_id: Type.String(),
    from_number: Nullable(Type.String()),
    status: Type.Enum(CAMPAIGN_STATUSES),
    pause_reason: Nullable(Type.String({ description: 'insufficient_balance when the dialer paused the campaign; null when paused by the API' })),
    concurrency: Type.Integer(),
    max_attempts: Type.Integer(),
    retry_delay_minutes: Type.Integer(),
    calling_window: Nullable(CallingWindow),
    default_country: Nullable(Type.String()),
    simulation: Nullable(Simulation),
    stats: CampaignStats,
    started_at: NullableTimestamp,
    completed_at: NullableTimestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Campaign' },
);
export type Campaign = Static<typeof Campaign>;

export const CampaignParams = Type.Object({ id: Type.String({ pattern: idPattern('cmp'), maxLength: 40 }) });
export const ContactParams = Type.Object({ id: Type.String({ pattern: idPattern('cmp'), maxLength: 40 }), contact_id: Type.String({ pattern: idPattern('cnt'), maxLength: 40 }) });
export const CampaignListQuery = Type.Object({ ...ListQuery.properties, status: Type.Optional(Type.Enum(CAMPAIGN_STATUSES)) });
export const ContactListQuery = Type.Object({ ...ListQuery.properties, status: Type.Optional(Type.Enum(CONTACT_STATUSES)) });

export const UploadCsv = Type.String({ description: 'CSV with a header row (UTF-8; `,` or `;`; at most 10 MiB and 100,000 data rows)', contentMediaType: 'text/csv' });
export const UploadMultipart = Type.Object({ file: Type.String({ description: 'The CSV file', format: 'binary' }) }, { additionalProperties: false });

export const UploadResult = Type.Object(
  {
    accepted: Type.Integer({ description: 'Contacts added' }),
    rejected: Type.Array(Type.Object({ row: Type.Integer({ description: 'Line of the file (the header is line 1)' }), reason: Type.String() })),
    duplicates: Type.Integer({ description: 'Numbers already in the file or the campaign' }),
    skipped_dnc: Type.Integer({ description: 'Numbers on the do-not-call list' }),
  },
  { title: 'CampaignUploadResult' },
);
export type UploadResult = Static<typeof UploadResult>;

export const Attempt = Type.Object(
  {
    attempt: Type.Integer(),
    call_id: Type.String(),
    status: Type.Enum(CALL_STATUSES, { description: 'queued until the call ends, then its terminal status' }),
    end_reason: Nullable(Type.String()),
    created_at: Timestamp,
    ended_at: NullableTimestamp,
  },
  { title: 'CampaignAttempt' },
);

export const Contact = Type.Object(
  {
    id: Type.String({ examples: ['cnt_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    campaign_id: Type.String(),
    row: Type.Integer({ description: 'Line of the upload it came from' }),
    phone: Type.String(),
    status: Type.Enum(CONTACT_STATUSES),
    attempts: Type.Integer(),
    next_attempt_at: NullableTimestamp,
    call_id: Nullable(Type.String({ description: 'The call of the latest attempt' })),
    timezone: Nullable(Type.String()),
    variables: Type.Record(Type.String(), Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'CampaignContact' },
);
export const ContactDetail = Type.Object({ ...Contact.properties, attempt_history: Type.Array(Attempt, { description: 'Every call placed for the contact, oldest first' }) }, { title: 'CampaignContactDetail' });

export const CampaignStatsDetail = Type.Object(
  {
    campaign_id: Type.String(),
    status: Type.Enum(CAMPAIGN_STATUSES),
    ...CampaignStats.properties,
    calls: Type.Integer({ description: 'Calls placed (attempts), canceled ones excluded' }),
    live_calls: Type.Integer({ description: 'Calls of the campaign ringing or in progress now' }),
    outcomes: Type.Record(Type.String({ maxLength: 20 }), Type.Integer(), { description: 'Ended calls by terminal status' }),
    duration_seconds: Type.Integer({ description: 'Billed seconds of its calls' }),
    cost_usd: Type.Number(),
    started_at: NullableTimestamp,
    completed_at: NullableTimestamp,
  },
  { title: 'CampaignStatsDetail' },
);
