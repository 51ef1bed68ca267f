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

const LatencyMs = (description: string) => Type.Integer({ minimum: 0, maximum: 60_000, description });

export const Simulation = Type.Object(
  {
    caller_script: Type.Optional(
      Type.Array(CallerUtterance, {
        maxItems: 50,
        description: "The sandbox caller's lines in order; when they run out the caller stays silent (the agent's silence handling ends the call)",
      }),
    ),
    latency: Type.Optional(
      Type.Object(
        {
          stt_ms: Type.Optional(LatencyMs('Added to each recognition of the caller\'s words')),
          llm_first_token_ms: Type.Optional(LatencyMs("Before the model's first token of each reply")),
          tts_first_audio_ms: Type.Optional(LatencyMs('Before the first audio of each synthesis')),
        },
        { additionalProperties: false, description: 'Simulated provider latencies in the call\'s virtual milliseconds (defaults 0), reported in each turn\'s `timings`' },
      ),
    ),
  },
  { additionalProperties: false, description: 'Sandbox only: the simulated callee\'s script and simulated provider latencies. Sandbox calls run on virtual time: the same simulation gives the same call on any machine' },
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
