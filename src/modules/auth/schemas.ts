import { Type, type Static } from 'typebox';
import { Timestamp } from '../../platform/http/schemas.ts';

export const Email = Type.String({ format: 'email', maxLength: 254, examples: ['ada@example.com'] });
export const Password = Type.String({ minLength: 8, maxLength: 256, description: 'At least 8 characters' });

export const User = Type.Object(
  {
    id: Type.String({ examples: ['usr_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    email: Email,
    name: Type.Union([Type.String(), Type.Null()]),
    email_verified: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'User' },
);
export type User = Static<typeof User>;

export const RegisterBody = Type.Object(
  { email: Email, password: Password, name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
);
export type RegisterBody = Static<typeof RegisterBody>;

export const LoginBody = Type.Object(
  { email: Email, password: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);
export type LoginBody = Static<typeof LoginBody>;

export const TokenPair = Type.Object(
  {
    access_token: Type.String({ description: 'JWT (HS256) for the Authorization header' }),
    refresh_token: Type.String({ description: 'Opaque rt_ token; single use, rotated on every refresh' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds until the access token expires', examples: [3600] }),
  },
  { title: 'TokenPair' },
);
export type TokenPair = Static<typeof TokenPair>;
