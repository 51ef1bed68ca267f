import { type Static, Type } from 'typebox';
import { ListQuery, Nullable, NullableTimestamp, Timestamp } from '../../platform/http/schemas.ts';
import { CALL_DIRECTIONS, CALL_STATUSES, END_REASONS, POST_CALL_STATUSES } from './tables.ts';

// The call as the API shows it, its list filters, its state history and its transcript.

const CALL_ID = 'call_01jdq3x4k5m6n7p8q9r0s1t2v3';

export const TranscriptItem = Type.Object(
  {
    role: Type.Enum(['agent', 'user']),
    text: Type.String(),
    start_ms: Type.Integer({ description: "Milliseconds since the answer, on the call's clock (simulated in the sandbox)" }),
    end_ms: Type.Integer(),
    interrupted: Type.Optional(Type.Boolean({ description: 'An agent turn cut by the caller: the words actually played' })),
    dtmf: Type.Optional(Type.Boolean({ description: 'A keypad digit the caller pressed (text is the digit: 0-9, *, #)' })),
    latency_ms: Type.Optional(Type.Integer({ description: "End of the caller's turn → first agent audio frame written" })),
    timings: Type.Optional(
      Type.Object({
        stt_ms: Type.Integer({ description: "The recogniser's own time for the turn's words (also when it ran early, during the caller's pause)" }),
        stt_wait_ms: Type.Integer({ description: 'What the turn waited for its transcript after it ended' }),
        llm_first_token_ms: Type.Integer(),
        tts_first_audio_ms: Type.Integer(),
      }),
    ),
  },
  { title: 'TranscriptEntry' },
);

export const CallLatency = Type.Object(
  { turns: Type.Integer(), p50_ms: Nullable(Type.Integer()), p95_ms: Nullable(Type.Integer()) },
  { title: 'CallLatency', description: 'Agent turns answering a caller turn; nearest-rank percentiles' },
);

export const Call = Type.Object(
  {
    id: Type.String({ examples: [CALL_ID] }),
    agent_id: Type.String(),
    direction: Type.Enum(CALL_DIRECTIONS),
    from: Nullable(Type.String({ examples: ['+15550100001'] })),
    to: Nullable(Type.String({ examples: ['+15550100200'] })),
    status: Type.Enum(CALL_STATUSES),
    end_reason: Nullable(Type.Enum(END_REASONS)),
    started_at: NullableTimestamp,
    answered_at: NullableTimestamp,
    ended_at: NullableTimestamp,
    duration_ms: Nullable(Type.Integer({ description: 'Connected time in milliseconds (simulated in the sandbox)' })),
    duration_seconds: Type.Integer({ description: 'Billed seconds: started seconds of connected time' }),
    cost_usd: Type.Number(),
    transcript: Type.Array(TranscriptItem),
    extracted: Type.Record(Type.String(), Type.Unknown()),
    variables: Type.Record(Type.String(), Type.String()),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    recording_url: Nullable(Type.String({ description: 'Signed absolute link (7 days) to the MP3 recording' })),
    recording_status: Nullable(
      Type.Enum(POST_CALL_STATUSES, {
        description: 'The MP3, made after the call: pending (GET …/recording answers 409 recording_not_ready), ready, or failed after its retries; null when the call has no audio',
      }),
    ),
    recording_error: Nullable(Type.String({ description: 'Why the recording failed (or why its last attempt did)' })),
    analysis_status: Nullable(Type.Enum(POST_CALL_STATUSES, { description: 'Extraction after the call: pending, ready or failed after its retries; null when the call was never answered' })),
    analysis_error: Nullable(Type.String({ description: 'Why the analysis failed (or why its last attempt did)' })),
    transcript_url: Nullable(Type.String({ description: 'Signed absolute link (7 days) to the transcript' })),
    campaign_id: Nullable(Type.String()),
    schedule_id: Nullable(Type.String()),
    transferred_to: Nullable(Type.String()),
    error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
    latency: Nullable(CallLatency),
    created_at: Timestamp,
  },
  { title: 'Call' },
);
export type Call = Static<typeof Call>;

export const CallListQuery = Type.Object(
  {
    ...ListQuery.properties,
    agent_id: Type.Optional(Type.String({ maxLength: 100 })),
    status: Type.Optional(Type.Enum(CALL_STATUSES)),
    direction: Type.Optional(Type.Enum(CALL_DIRECTIONS)),
    campaign_id: Type.Optional(Type.String({ maxLength: 100 })),
    from: Type.Optional(Type.String({ maxLength: 32, description: 'Calls from this number (E.164)' })),
    to: Type.Optional(Type.String({ maxLength: 32, description: 'Calls to this number (E.164)' })),
    created_after: Type.Optional(Timestamp),
    created_before: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);
export type CallListQuery = Static<typeof CallListQuery>;

export const CallEvents = Type.Object(
  { data: Type.Array(Type.Object({ status: Type.Enum(CALL_STATUSES), at: Timestamp })) },
  { title: 'CallEvents', description: 'State history, oldest first, from queued' },
);

export const TranscriptDocument = Type.Object(
  { call_id: Type.String(), transcript: Type.Array(TranscriptItem) },
  { title: 'CallTranscript' },
);
