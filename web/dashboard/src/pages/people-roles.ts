import type { Member, Workspace } from '../../../../sdks/typescript/src/index.ts';

// Who may do what on the members page, as the API decides it: owners and admins manage members
// and invitations; only an owner grants, changes or removes the owner role; the last owner stays.

export type Role = Member['role'];
export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];

export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  owner: 'Owner: everything, owners included',
  admin: 'Admin: everything but owners',
  member: 'Member: agents, calls and the rest, not billing or people',
  viewer: 'Viewer: read only',
};

/** Owners and admins manage members, invitations and read the audit log. */
export function managesPeople(role: Workspace['role'] | undefined): boolean {
  return role === 'owner' || role === 'admin';
}

/** The roles the caller may give (an invitation or a change): an admin never makes an owner. */
export function grantableRoles(callerRole: Workspace['role'] | undefined): Role[] {
  if (callerRole === 'owner') return [...ROLES];
  if (callerRole === 'admin') return ROLES.filter((role) => role !== 'owner');
  return [];
}

/** Whether the caller may change or remove this member (an admin leaves owners alone). */
export function canManageMember(callerRole: Workspace['role'] | undefined, member: Member): boolean {
  if (!managesPeople(callerRole)) return false;
  return callerRole === 'owner' || member.role !== 'owner';
}

/** The only owner left: the API refuses to demote or remove them (409). */
export function isLastOwner(members: Member[], member: Member): boolean {
  return member.role === 'owner' && members.filter((m) => m.role === 'owner').length === 1;
}

export const memberName = (member: Pick<Member, 'name' | 'email'>) => member.name?.trim() || member.email;
