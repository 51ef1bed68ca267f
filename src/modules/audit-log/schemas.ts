import { Type, type Static } from 'typebox';
import { ListOf, ListQuery, Nullable, Timestamp } from '../../platform/http/schemas.ts';

export const AUDIT_ACTOR_TYPES = ['user', 'api_key'] as const;
export const AuditActorType = Type.Enum(AUDIT_ACTOR_TYPES);

export const AuditEntry = Type.Object(
  {
    id: Type.String({ examples: ['aud_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    actor: Type.Object({
      type: AuditActorType,
      id: Type.String({ description: 'User id (usr_…) or API key id (key_…)' }),
      name: Nullable(Type.String({ description: "The user's email or the key's name at the time" })),
    }),
    action: Type.String({ description: 'What was done, e.g. agents.create, api_keys.delete, api_key.used', examples: ['agents.create'] }),
    method: Nullable(Type.String({ description: 'HTTP method; null for api_key.used rows', examples: ['POST'] })),
    route: Nullable(Type.String({ description: 'Route pattern; null for api_key.used rows', examples: ['/v1/agents/:id'] })),
    resource_id: Nullable(Type.String()),
    status_code: Nullable(Type.Integer({ description: 'Response status; null for api_key.used rows', examples: [201] })),
    ip: Nullable(Type.String()),
    user_agent: Nullable(Type.String()),
    request_id: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { title: 'AuditEntry' },
);
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditLogQuery = Type.Object({
  ...ListQuery.properties,
  actor_id: Type.Optional(Type.String({ maxLength: 100, description: 'Only rows of this user or API key' })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Only rows at or after this time' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Only rows before this time' })),
});
export type AuditLogQuery = Static<typeof AuditLogQuery>;

export const AuditLogList = ListOf(AuditEntry, 'AuditLogList');
