import { type Static, Type } from 'typebox';
import { CALL_STATUSES } from '../calls/tables.ts';

// The public demo: a call to the visitor's phone, or one chat turn, with the demo agent.

export const DemoCallBody = Type.Object(
  { phone: Type.String({ minLength: 3, maxLength: 32, description: 'The number to call, normalised to E.164', examples: ['+15550100200'] }) },
  { additionalProperties: false },
);
export type DemoCallBody = Static<typeof DemoCallBody>;

export const DemoCall = Type.Object(
  {
    call_id: Type.String({ examples: ['call_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    status: Type.Enum(CALL_STATUSES),
    sandbox: Type.Boolean({ description: 'True when the call is simulated (TELEPHONY_PROVIDER=sandbox)' }),
    max_duration_seconds: Type.Integer({ description: 'The call ends after this' }),
  },
  { title: 'DemoCall' },
);
export type DemoCall = Static<typeof DemoCall>;

export const DemoChatBody = Type.Object(
  { message: Type.String({ minLength: 1, maxLength: 1000, examples: ['What can this platform do?'] }) },
  { additionalProperties: false },
);
export type DemoChatBody = Static<typeof DemoChatBody>;

export const DemoChatReply = Type.Object(
  {
    reply: Type.String(),
    ended: Type.Boolean({ description: 'The agent ended the conversation' }),
  },
  { title: 'DemoChatReply' },
);
export type DemoChatReply = Static<typeof DemoChatReply>;
