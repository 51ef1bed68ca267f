import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Member } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Dialog, Heading, Modal } from 'react-aria-components';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button, FormError, SelectField } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';
import { useMe } from './me-query.ts';
import { InviteForm, PendingInvitations } from './members-invitations.tsx';
import { canManageMember, grantableRoles, managesPeople, memberName, ROLE_DESCRIPTIONS, type Role } from './people-roles.ts';

// The workspace's members and their roles: owners and admins invite (by email, with a role),
// change roles and remove members, and see the pending invitations; anyone may leave.

function RoleDialog({ member, onClose }: { member: Member; onClose(): void }) {
  const { api, workspace } = useWorkspace();
  const queryClient = useQueryClient();
  const [role, setRole] = useState<Role>(member.role);
  const change = useMutation({
    mutationFn: () => api.workspaces.updateMember(workspace.id, member.user_id, { role }),
    onSuccess: () => {
      void queryClient.invalidateQueries();
      onClose();
    },
  });
  const options = grantableRoles(workspace.role).map((value) => ({ value, label: ROLE_DESCRIPTIONS[value] }));
  return (
    <Modal isOpen isDismissable onOpenChange={(open) => (open ? undefined : onClose())} className="modal">
      <Dialog className="dialog">
        <Heading slot="title">Change the role of {memberName(member)}</Heading>
        <SelectField label="Role" name="member_role" value={role} onChange={(value) => setRole(value as Role)} options={options} />
        <FormError message={change.error ? describeError(change.error).message : undefined} />
        <div className="actions">
          <Button onPress={() => change.mutate()} isDisabled={role === member.role} isPending={change.isPending}>
            Save role
          </Button>
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
        </div>
      </Dialog>
    </Modal>
  );
}

function RemoveDialog({ member, isMe, onClose }: { member: Member; isMe: boolean; onClose(): void }) {
  const { api, workspace, workspaces, select } = useWorkspace();
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api.workspaces.removeMember(workspace.id, member.user_id),
    onSuccess: () => {
      onClose();
      // Left: this workspace is no longer the user's; open another one.
      const other = workspaces.find((w) => w.id !== workspace.id);
      if (isMe && other) select(other.id);
      else void queryClient.invalidateQueries();
    },
  });
  const title = isMe ? `Leave ${workspace.name}?` : `Remove ${memberName(member)}?`;
  return (
    <Modal isOpen isDismissable onOpenChange={(open) => (open ? undefined : onClose())} className="modal">
      <Dialog role="alertdialog" className="dialog">
        <Heading slot="title">{title}</Heading>
        <p>{isMe ? 'You lose access to its agents, calls and settings until someone invites you again.' : `${member.email} loses access to this workspace at once.`}</p>
        <FormError message={remove.error ? describeError(remove.error).message : undefined} />
        <div className="actions">
          <Button variant="danger" onPress={() => remove.mutate()} isPending={remove.isPending} autoFocus>
            {isMe ? 'Leave workspace' : 'Remove member'}
          </Button>
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
        </div>
      </Dialog>
    </Modal>
  );
}

function MemberActions({ member, isMe, onChange, onRemove }: { member: Member; isMe: boolean; onChange(): void; onRemove(): void }) {
  const { workspace } = useWorkspace();
  const manages = canManageMember(workspace.role, member);
  const name = memberName(member);
  return (
    <div className="actions">
      {manages ? (
        <Button variant="secondary" onPress={onChange} aria-label={`Change role of ${name}`}>
          Change role
        </Button>
      ) : null}
      {manages || isMe ? (
        <Button variant="danger" onPress={onRemove} aria-label={isMe ? 'Leave this workspace' : `Remove ${name}`}>
          {isMe ? 'Leave' : 'Remove'}
        </Button>
      ) : null}
    </div>
  );
}

function MemberTable({ members, myId }: { members: Member[]; myId: string | undefined }) {
  const [changing, setChanging] = useState<Member>();
  const [removing, setRemoving] = useState<Member>();
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Members</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Joined</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {members.map((member) => (
            <tr key={member.user_id}>
              <td>
                {member.name ?? '—'}
                {member.user_id === myId ? ' (you)' : ''}
              </td>
              <td className="url">{member.email}</td>
              <td data-field="role">{member.role}</td>
              <td>{dateTime(member.joined_at)}</td>
              <td>
                <MemberActions member={member} isMe={member.user_id === myId} onChange={() => setChanging(member)} onRemove={() => setRemoving(member)} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {changing ? <RoleDialog member={changing} onClose={() => setChanging(undefined)} /> : null}
      {removing ? <RemoveDialog member={removing} isMe={removing.user_id === myId} onClose={() => setRemoving(undefined)} /> : null}
    </div>
  );
}

export function MembersPage() {
  const { api, workspace } = useWorkspace();
  const members = useQuery({ queryKey: useKey('members'), queryFn: async () => await api.workspaces.listMembers(workspace.id, { limit: 100 }) });
  const me = useMe();
  const manages = managesPeople(workspace.role);
  return (
    <>
      <PageTitle>Members</PageTitle>
      {manages ? <InviteForm /> : <p className="hint">Your role here is {workspace.role ?? 'unknown'}: only owners and admins invite and manage members.</p>}
      <section className="panel" aria-labelledby="members-heading">
        <h2 id="members-heading">Members of {workspace.name}</h2>
        <QueryView query={members} isEmpty={(page) => page.data.length === 0} empty={<Empty title="No members." />}>
          {(page) => (
            <>
              <MemberTable members={page.data} myId={me.data?.id} />
              {page.has_more ? <p className="hint">Showing the newest 100 members.</p> : null}
            </>
          )}
        </QueryView>
      </section>
      {manages ? <PendingInvitations /> : null}
    </>
  );
}
