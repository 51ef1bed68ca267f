import { Type, type Static } from 'typebox';
import { SCOPES } from '../../platform/auth/access.ts';
import { IdParams, ListOf, ListQuery, Nullable, NullableTimestamp, Timestamp } from '../../platform/http/schemas.ts';

export const ApiKeyScope = Type.Enum(SCOPES, {
  description: 'read-only: GET only; write: create/read/update/delete of the workspace resources; admin: write plus billing, members, branding, audit log',
});

const ApiKeyName = Type.String({ minLength: 1, maxLength: 100, examples: ['Production backend'] });

const apiKeyFields = {
  id: Type.String({ examples: ['key_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
  name: ApiKeyName,
  scope: ApiKeyScope,
  prefix: Type.String({ description: 'The first 7 characters of the key, to recognise it', examples: ['sk_EXAM'] }),
  last4: Type.String({ description: 'The last 4 characters of the key', examples: ['C2ou'] }),
  created_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'Updated at most once a minute' }),
  last_used_ip: Nullable(Type.String()),
  revoked_at: NullableTimestamp,
};

/** A key as listed: never the key itself nor its hash. */
export const ApiKey = Type.Object(apiKeyFields, { title: 'ApiKey' });
export type ApiKey = Static<typeof ApiKey>;

/** The answer to a create: the only time the key is shown. */
export const ApiKeyWithSecret = Type.Object(
  {
    ...apiKeyFields,
    key: Type.String({
      description: 'The API key: sk_ + 40 base62 characters + a 6-character checksum. Shown once; store it now.',
      examples: ['sk_EXAMPLExDoNotUse0123456789abcdefghijklmn0rC2ou'],
    }),
  },
  { title: 'ApiKeyWithSecret' },
);
export type ApiKeyWithSecret = Static<typeof ApiKeyWithSecret>;

export const ApiKeyCreate = Type.Object({ name: ApiKeyName, scope: ApiKeyScope }, { additionalProperties: false, title: 'ApiKeyCreate' });
export type ApiKeyCreate = Static<typeof ApiKeyCreate>;

/** Only the name changes; a key's scope is fixed at creation (rotate to change it). */
export const ApiKeyUpdate = Type.Object({ name: ApiKeyName }, { additionalProperties: false, title: 'ApiKeyUpdate' });
export type ApiKeyUpdate = Static<typeof ApiKeyUpdate>;

export const ApiKeyParams = IdParams('API key id (key_…)');

export const ApiKeyListQuery = ListQuery;
export type ApiKeyListQuery = Static<typeof ApiKeyListQuery>;

export const ApiKeyList = ListOf(ApiKey, 'ApiKeyList');
