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

export const RefreshBody = Type.Object(
  { refresh_token: Type.String({ minLength: 1, maxLength: 200, description: 'The rt_ token of the last login or refresh' }) },
  { additionalProperties: false },
);
export type RefreshBody = Static<typeof RefreshBody>;

export const UpdateMeBody = Type.Object(
  {
    name: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], { description: 'null clears the name' })),
    email: Type.Optional(
      Type.String({ format: 'email', maxLength: 254, description: 'A new address: it becomes unverified and a verification mail is sent to it' }),
    ),
    current_password: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'Required when `email` changes (re-authentication for a sensitive change)' }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateMeBody = Static<typeof UpdateMeBody>;

export const ChangePasswordBody = Type.Object(
  { current_password: Type.String({ minLength: 1, maxLength: 256 }), new_password: Password },
  { additionalProperties: false },
);
export type ChangePasswordBody = Static<typeof ChangePasswordBody>;

export const ForgotPasswordBody = Type.Object({ email: Email }, { additionalProperties: false });
export type ForgotPasswordBody = Static<typeof ForgotPasswordBody>;

const MailedToken = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

export const ResetPasswordBody = Type.Object(
  { token: MailedToken('The pr_ token from the reset mail (1 hour, single use)'), new_password: Password },
  { additionalProperties: false },
);
export type ResetPasswordBody = Static<typeof ResetPasswordBody>;

export const VerifyEmailBody = Type.Object(
  { token: MailedToken('The ev_ token from the verification mail (7 days, single use)') },
  { additionalProperties: false },
);
export type VerifyEmailBody = Static<typeof VerifyEmailBody>;

export const Session = Type.Object(
  {
    id: Type.String({ examples: ['ses_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    device: Type.Union([Type.String(), Type.Null()], { description: 'User agent of the login' }),
    ip: Type.Union([Type.String(), Type.Null()], { description: 'IP address of the login' }),
    created_at: Timestamp,
    last_used_at: Timestamp,
    current: Type.Boolean({ description: 'True for the session of the access token making this request' }),
  },
  { title: 'Session' },
);
export type Session = Static<typeof Session>;

/** 202 Accepted: a mail is on its way (or, for an unknown address, deliberately not, without saying so). */
export const Accepted = Type.Object(
  { message: Type.String({ examples: ['If an account exists for this address, a reset link has been mailed to it.'] }) },
  { title: 'Accepted' },
);
export type Accepted = Static<typeof Accepted>;
