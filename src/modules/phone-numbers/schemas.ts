import { type Static, Type } from 'typebox';
import { ListQuery, Nullable, Timestamp } from '../../platform/http/schemas.ts';

// Phone numbers of a workspace (DESIGN "Phone numbers").

const Capabilities = Type.Object({ voice: Type.Boolean(), sms: Type.Boolean() }, { title: 'PhoneNumberCapabilities' });
const E164 = Type.String({ minLength: 3, maxLength: 32, description: 'Phone number, normalised to E.164', examples: ['+15550142007'] });
const AgentId = Type.String({ minLength: 1, maxLength: 100, description: 'An agent of this workspace' });
const Label = Type.String({ maxLength: 200 });

export const PhoneNumber = Type.Object(
  {
    id: Type.String({ examples: ['pn_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    number: Type.String({ examples: ['+15550142007'] }),
    country: Type.String({ examples: ['US'] }),
    provider: Type.String({ examples: ['sandbox'] }),
    capabilities: Capabilities,
    agent_id: Nullable(Type.String()),
    label: Nullable(Type.String()),
    monthly_cost_usd: Type.Number(),
    created_at: Timestamp,
  },
  { title: 'PhoneNumber' },
);
export type PhoneNumber = Static<typeof PhoneNumber>;

export const AvailableNumber = Type.Object(
  { number: Type.String(), country: Type.String(), capabilities: Capabilities, monthly_cost_usd: Type.Number() },
  { title: 'AvailablePhoneNumber' },
);

export const AvailableQuery = Type.Object(
  {
    country: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$', default: 'US', description: 'ISO 3166-1 alpha-2' })),
    area_code: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
    contains: Type.Optional(Type.String({ pattern: '^[0-9+]{1,15}$', description: 'Digits the number contains' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
  },
  { additionalProperties: false },
);

export const PhoneNumberListQuery = Type.Object({ ...ListQuery.properties, agent_id: Type.Optional(Type.String({ maxLength: 100 })) }, { additionalProperties: false });

export const AcquireBody = Type.Object({ number: E164, label: Type.Optional(Label), agent_id: Type.Optional(AgentId) }, { additionalProperties: false });
export type AcquireBody = Static<typeof AcquireBody>;

export const PhoneNumberUpdate = Type.Object(
  { label: Type.Optional(Nullable(Label)), agent_id: Type.Optional(Nullable(AgentId)) },
  { additionalProperties: false, description: 'agent_id null unassigns' },
);
export type PhoneNumberUpdate = Static<typeof PhoneNumberUpdate>;

export const AssignBody = Type.Object({ agent_id: AgentId }, { additionalProperties: false });
