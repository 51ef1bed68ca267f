import { type Static, Type } from 'typebox';
import { Nullable, Timestamp } from '../../platform/http/schemas.ts';

export const DncEntry = Type.Object(
  { number: Type.String({ examples: ['+15550100222'] }), reason: Nullable(Type.String()), created_at: Timestamp },
  { title: 'DoNotCallEntry' },
);
export type DncEntry = Static<typeof DncEntry>;
export const DncBody = Type.Object(
  { number: Type.String({ minLength: 3, maxLength: 32, description: 'Phone number, normalised to E.164' }), reason: Type.Optional(Type.String({ maxLength: 500 })) },
  { additionalProperties: false },
);
export type DncBody = Static<typeof DncBody>;
export const NumberParams = Type.Object({ number: Type.String({ maxLength: 40, description: 'E.164 number, URL-encoded (%2B for +)' }) });
