import { Type, type Static } from 'typebox';
import { ROLES } from '../../platform/auth/access.ts';
import { ListOf, Nullable, Timestamp } from '../../platform/http/schemas.ts';
import { idPattern } from '../../platform/ids.ts';

export const RoleSchema = Type.Enum(ROLES, {
  description: 'owner and admin act with the admin scope, member with write, viewer with read-only',
  examples: ['member'],
});

const WorkspaceName = Type.String({ maxLength: 200, pattern: '\\S', description: '1..200 characters, not only spaces', examples: ['Acme support'] });

export const Workspace = Type.Object(
  {
    id: Type.String({ examples: ['ws_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    name: Type.String(),
    role: Nullable(RoleSchema),
    settings: Type.Object(
      { max_concurrent_calls: Type.Integer({ description: 'Live calls at once; calls beyond wait in queued (default MAX_CONCURRENT_CALLS)', examples: [10] }) },
      { title: 'WorkspaceSettings' },
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Workspace', description: '`role` is the caller\'s role in the workspace (null when the caller is an API key)' },
);
export type Workspace = Static<typeof Workspace>;

export const WorkspaceList = ListOf(Workspace, 'WorkspaceList');

export const WorkspaceCreate = Type.Object({ name: WorkspaceName }, { additionalProperties: false });
export type WorkspaceCreate = Static<typeof WorkspaceCreate>;

export const WorkspaceUpdate = Type.Object(
  {
    name: Type.Optional(WorkspaceName),
    settings: Type.Optional(
      Type.Object({ max_concurrent_calls: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Owners and admins; lowering it below the live count only holds back new starts' })) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false, minProperties: 1, description: 'name, settings, or both' },
);
export type WorkspaceUpdate = Static<typeof WorkspaceUpdate>;

const WorkspaceId = Type.String({ pattern: idPattern('ws'), description: 'Workspace id (ws_…)' });
const UserId = Type.String({ pattern: idPattern('usr'), description: 'User id (usr_…) of the member' });

export const WorkspaceParams = Type.Object({ id: WorkspaceId });
export const MemberParams = Type.Object({ id: WorkspaceId, user_id: UserId });
export type MemberParams = Static<typeof MemberParams>;

export const Member = Type.Object(
  {
    user_id: Type.String({ examples: ['usr_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    email: Type.String({ format: 'email' }),
    name: Nullable(Type.String()),
    role: RoleSchema,
    joined_at: Timestamp,
  },
  { title: 'Member' },
);
export type Member = Static<typeof Member>;

export const MemberList = ListOf(Member, 'MemberList');

export const MemberUpdate = Type.Object({ role: RoleSchema }, { additionalProperties: false });
export type MemberUpdate = Static<typeof MemberUpdate>;
