import { type Static, Type } from 'typebox';
import { ListQuery, Nullable, NullableTimestamp, Timestamp } from '../../platform/http/schemas.ts';
import { Simulation } from '../calls/schemas-control.ts';
import { SCHEDULE_STATUSES } from './tables.ts';

// A schedule as the API shows it, its bodies and its list filters.

const PhoneNumber = Type.String({ minLength: 3, maxLength: 32, description: 'Phone number, normalised to E.164', examples: ['+15550100200'] });
const Variables = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 2000 }), {
  maxProperties: 50,
  description: 'Values for {{name}} placeholders in the prompt and first message, given to the call',
});
const Metadata = Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), { maxProperties: 50, description: 'Free-form key/value data, given to the call' });
const When = Type.String({
  format: 'date-time',
  description: 'When to place the call (ISO 8601). Not more than 5 s in the past (then 422) and at most 366 days ahead',
  examples: ['2026-11-24T09:30:00.000Z'],
});

export const Schedule = Type.Object(
  {
    id: Type.String({ examples: ['sch_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    agent_id: Type.String(),
    to: Type.String({ examples: ['+15550100200'] }),
    from: Nullable(Type.String({ description: 'Caller id asked for; null: the default' })),
    scheduled_at: Timestamp,
    variables: Type.Record(Type.String(), Type.String()),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    simulation: Nullable(Simulation),
    status: Type.Enum(SCHEDULE_STATUSES, { description: 'scheduled → dispatched (the call was queued) | failed (it could not be placed) | canceled' }),
    call_id: Nullable(Type.String({ description: 'The call placed when it fired' })),
    late: Type.Boolean({ description: 'Fired more than 5 s after scheduled_at (the worker was not running at that time)' }),
    dispatched_at: Nullable({ ...Timestamp, description: 'When it fired (dispatched or failed)' }),
    canceled_at: NullableTimestamp,
    error: Nullable(
      Type.Object(
        { code: Type.String({ examples: ['insufficient_balance', 'do_not_call', 'agent_not_found', 'no_caller_id'] }), message: Type.String() },
        { description: 'Why a failed schedule could not be placed' },
      ),
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Schedule' },
);
export type Schedule = Static<typeof Schedule>;

export const ScheduleCreate = Type.Object(
  {
    agent_id: Type.String({ minLength: 1, maxLength: 100 }),
    to: PhoneNumber,
    from: Type.Optional(PhoneNumber),
    scheduled_at: When,
    variables: Type.Optional(Variables),
    metadata: Type.Optional(Metadata),
    simulation: Type.Optional(Simulation),
  },
  { additionalProperties: false },
);
export type ScheduleCreate = Static<typeof ScheduleCreate>;

export const ScheduleUpdate = Type.Object(
  {
    agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    to: Type.Optional(PhoneNumber),
    from: Type.Optional(Nullable(PhoneNumber)),
    scheduled_at: Type.Optional(When),
    variables: Type.Optional(Variables),
    metadata: Type.Optional(Metadata),
    simulation: Type.Optional(Nullable(Simulation)),
  },
  { additionalProperties: false },
);
export type ScheduleUpdate = Static<typeof ScheduleUpdate>;

export const ScheduleListQuery = Type.Object(
  {
    ...ListQuery.properties,
    status: Type.Optional(Type.Enum(SCHEDULE_STATUSES)),
    agent_id: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
export type ScheduleListQuery = Static<typeof ScheduleListQuery>;
