import { type Static, Type } from 'typebox';

// Request bodies of the calls that change a call: place one, hang up, transfer, analyse, and the
// sandbox's inbound call.

const PhoneNumber = Type.String({ minLength: 3, maxLength: 32, description: 'Phone number, normalised to E.164', examples: ['+15550100200'] });
const Variables = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 2000 }), {
  maxProperties: 50,
  description: 'Values for {{name}} placeholders in the prompt and first message',
});
const Metadata = Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), { maxProperties: 50, description: 'Free-form key/value data, returned as given' });

export const CallerUtterance = Type.Union([
  Type.String({ minLength: 1, maxLength: 500, description: 'Said after the agent finishes its turn' }),
  Type.Object(
    {
      text: Type.String({ minLength: 1, maxLength: 500 }),
      interrupt_after_ms: Type.Integer({ minimum: 0, maximum: 600_000, description: 'Said this long (simulated ms) after the agent starts its turn: a barge-in' }),
    },
    { additionalProperties: false },
  ),
]);

export const Simulation = Type.Object(
  {
    caller_script: Type.Optional(
      Type.Array(CallerUtterance, {
        maxItems: 50,
        description: "The sandbox caller's lines in order; when they run out the caller stays silent (the agent's silence handling ends the call)",
      }),
    ),
  },
  { additionalProperties: false, description: 'Sandbox only: replaces the simulated callee\'s script' },
);

export const OutboundCallBody = Type.Object(
  {
    agent_id: Type.String({ minLength: 1, maxLength: 100 }),
    to: PhoneNumber,
    from: Type.Optional(PhoneNumber),
    variables: Type.Optional(Variables),
    metadata: Type.Optional(Metadata),
    simulation: Type.Optional(Simulation),
  },
  { additionalProperties: false },
);
export type OutboundCallBody = Static<typeof OutboundCallBody>;

export const TransferBody = Type.Object(
  { to: Type.Optional({ ...PhoneNumber, description: "Default: the agent's transfer_number" }) },
  { additionalProperties: false },
);

export const InboundCallBody = Type.Object(
  {
    to: { ...PhoneNumber, description: 'One of the workspace\'s phone numbers, assigned to an agent' },
    from: { ...PhoneNumber, description: 'The simulated caller' },
    simulation: Type.Optional(Simulation),
  },
  { additionalProperties: false },
);
export type InboundCallBody = Static<typeof InboundCallBody>;
