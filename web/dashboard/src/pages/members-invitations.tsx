import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Invitation } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, Field, Form, FormError, SelectField } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { Empty, QueryView } from '../ui/states.tsx';
import { grantableRoles, ROLE_DESCRIPTIONS, type Role } from './people-roles.ts';

// Invitations: sent by email with a role (the mail's link opens /invitations/<token>), listed
// while pending, revoked at once (the link stops working).

export function InviteForm() {
  const { api, workspace } = useWorkspace();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const invite = useMutation({
    mutationFn: () => api.workspaces.invite(workspace.id, { email: email.trim(), role }),
    onSuccess: () => {
      setEmail('');
      void queryClient.invalidateQueries();
    },
  });
  const failure = invite.error ? describeError(invite.error) : undefined;
  const options = grantableRoles(workspace.role).map((value) => ({ value, label: ROLE_DESCRIPTIONS[value] }));
  return (
    <Form label="Invite someone" className="form inline" onSubmit={() => invite.mutate()}>
      <Field label="Email to invite" name="email" type="email" autoComplete="off" value={email} onChange={setEmail} required error={failure?.fields.email} />
      <SelectField label="Role" name="role" value={role} onChange={(value) => setRole(value as Role)} options={options} error={failure?.fields.role} />
      <Button type="submit" isDisabled={email.trim() === ''} isPending={invite.isPending}>
        Send invitation
      </Button>
      <span role="status" className="hint">
        {invite.data ? `Invitation sent to ${invite.data.email}; its link works until ${dateTime(invite.data.expires_at)}.` : ''}
      </span>
      <FormError message={failure && !failure.fields.email && !failure.fields.role ? failure.message : undefined} />
    </Form>
  );
}

function InvitationTable({ invitations, revoke, busy }: { invitations: Invitation[]; revoke(invitation: Invitation): void; busy: boolean }) {
  return (
    <DataTable caption="Pending invitations" columns={['Email', 'Role', 'Sent', 'Expires', 'Revoke']}>
      {invitations.map((invitation) => (
        <tr key={invitation.id}>
          <td className="url">{invitation.email}</td>
          <td>{invitation.role}</td>
          <td>{dateTime(invitation.created_at)}</td>
          <td>{dateTime(invitation.expires_at)}</td>
          <td>
            <Button variant="secondary" onPress={() => revoke(invitation)} isPending={busy} aria-label={`Revoke the invitation of ${invitation.email}`}>
              Revoke
            </Button>
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

export function PendingInvitations() {
  const { api, workspace } = useWorkspace();
  const queryClient = useQueryClient();
  const invitations = useQuery({ queryKey: useKey('invitations'), queryFn: async () => await api.workspaces.listInvitations(workspace.id, { limit: 100 }) });
  const revoke = useMutation({
    mutationFn: async (invitation: Invitation) => {
      await api.workspaces.revokeInvitation(workspace.id, invitation.id);
      return invitation;
    },
    onSuccess: () => void queryClient.invalidateQueries(),
  });
  return (
    <section className="panel" aria-labelledby="invitations-heading">
      <h2 id="invitations-heading">Pending invitations</h2>
      <p role="status" className="hint">
        {revoke.data ? `The invitation of ${revoke.data.email} is revoked: its link no longer works.` : ''}
      </p>
      <FormError message={revoke.error ? describeError(revoke.error).message : undefined} />
      <QueryView query={invitations} isEmpty={(page) => page.data.length === 0} empty={<Empty title="No pending invitations." />}>
        {(page) => <InvitationTable invitations={page.data} revoke={(invitation) => revoke.mutate(invitation)} busy={revoke.isPending} />}
      </QueryView>
    </section>
  );
}
