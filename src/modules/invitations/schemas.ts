import { Type, type Static } from 'typebox';
import { ListOf, Nullable, Timestamp } from '../../platform/http/schemas.ts';
import { idPattern } from '../../platform/ids.ts';
import { Member, RoleSchema, Workspace } from '../workspaces/schemas.ts';

export const INVITATION_STATUSES = ['pending', 'accepted', 'revoked', 'expired'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

export const InviteBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254, examples: ['grace@example.com'], description: 'Who to invite; they accept while logged in with this address' }),
    role: RoleSchema,
  },
  { additionalProperties: false },
);
export type InviteBody = Static<typeof InviteBody>;

export const Invitation = Type.Object(
  {
    id: Type.String({ examples: ['inv_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    workspace_id: Type.String(),
    email: Type.String({ format: 'email' }),
    role: RoleSchema,
    status: Type.Enum(INVITATION_STATUSES),
    invited_by: Nullable(Type.String({ description: 'User id of the inviter' })),
    created_at: Timestamp,
    expires_at: Timestamp,
  },
  { title: 'Invitation', description: 'The token is only in the mail sent to the invitee; it is stored hashed.' },
);
export type Invitation = Static<typeof Invitation>;

export const InvitationList = ListOf(Invitation, 'InvitationList');

export const InvitationParams = Type.Object({
  id: Type.String({ pattern: idPattern('ws'), description: 'Workspace id (ws_…)' }),
  inv_id: Type.String({ pattern: idPattern('inv'), description: 'Invitation id (inv_…)' }),
});

export const TokenParams = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'The iv_ token from the invitation mail (7 days, single use)' }),
});

export const AcceptedInvitation = Type.Object(
  { workspace: Workspace, member: Member },
  { title: 'AcceptedInvitation', description: 'The workspace joined and the new membership' },
);
export type AcceptedInvitation = Static<typeof AcceptedInvitation>;
