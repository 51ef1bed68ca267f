import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { User } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useWorkspace } from '../api/workspace.tsx';
import { Button, Field, Form, FormError } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { QueryView } from '../ui/states.tsx';
import { ME_KEY, useMe } from './me-query.ts';
import { SessionsPanel } from './profile-sessions.tsx';
import { draftOfUser, EMPTY_PASSWORD_DRAFT, emailChanges, type PasswordDraft, passwordProblems, profileUpdateOf } from './profile-forms.ts';

// The signed-in user's own account: name and email (a new email needs the current password and
// is unverified until its mailed link is opened), the verification state with a new mail on
// request, the password change (which signs the other sessions out), and the sessions.

function DetailsPanel({ user }: { user: User }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState(() => draftOfUser(user));
  const [note, setNote] = useState('');
  const save = useMutation({
    mutationFn: async () => {
      const body = profileUpdateOf(user, draft);
      return body ? await api.auth.updateMe(body) : user;
    },
    onSuccess: (saved) => {
      setNote(saved.email !== user.email ? `Saved. A confirmation mail is on its way to ${saved.email}.` : 'Saved');
      setDraft(draftOfUser(saved));
      queryClient.setQueryData(ME_KEY, saved);
      void queryClient.invalidateQueries();
    },
    onError: () => setNote(''),
  });
  const failure = save.error ? describeError(save.error) : undefined;
  const asksPassword = emailChanges(user, draft);
  return (
    <section className="panel" aria-labelledby="details-heading">
      <h2 id="details-heading">Your details</h2>
      <Form label="Your details" onSubmit={() => save.mutate()}>
        <Field label="Name" name="name" autoComplete="name" value={draft.name} onChange={(name) => setDraft({ ...draft, name })} error={failure?.fields.name} />
        <Field label="Email" name="email" type="email" autoComplete="email" value={draft.email} onChange={(email) => setDraft({ ...draft, email })} required error={failure?.fields.email} description="A new address stays unconfirmed until you open the link mailed to it." />
        {asksPassword ? (
          <Field label="Current password" name="current_password" type="password" autoComplete="current-password" value={draft.current_password} onChange={(current_password) => setDraft({ ...draft, current_password })} required error={failure?.fields.current_password} description="Needed to change your email address." />
        ) : null}
        <FormError message={failure && Object.keys(failure.fields).length === 0 ? failure.message : undefined} />
        <div className="actions">
          <Button type="submit" isPending={save.isPending}>
            Save details
          </Button>
          <span role="status" className="hint">
            {note}
          </span>
        </div>
      </Form>
    </section>
  );
}

function VerificationPanel({ user }: { user: User }) {
  const { api } = useWorkspace();
  const resend = useMutation({ mutationFn: () => api.auth.resendVerification() });
  return (
    <section className="panel" aria-labelledby="verification-heading">
      <h2 id="verification-heading">Email confirmation</h2>
      <p data-testid="verification-state">
        <span className={`badge ${user.email_verified ? 'badge-completed' : 'badge-pending'}`}>{user.email_verified ? 'Confirmed' : 'Not confirmed'}</span> {user.email}
      </p>
      {user.email_verified ? null : (
        <div className="actions">
          <Button variant="secondary" onPress={() => resend.mutate()} isPending={resend.isPending}>
            Send the confirmation mail again
          </Button>
          <span role="status" className="hint">
            {resend.isSuccess ? `A confirmation mail is on its way to ${user.email}. Its link works for 7 days.` : ''}
          </span>
        </div>
      )}
      <FormError message={resend.error ? describeError(resend.error).message : undefined} />
      <p className="hint">Account created {dateTime(user.created_at)}.</p>
    </section>
  );
}

function PasswordPanel() {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<PasswordDraft>(EMPTY_PASSWORD_DRAFT);
  const [checked, setChecked] = useState(false);
  const change = useMutation({
    mutationFn: () => api.auth.changePassword({ current_password: draft.current_password, new_password: draft.new_password }),
    onSuccess: () => {
      setDraft(EMPTY_PASSWORD_DRAFT);
      setChecked(false);
      void queryClient.invalidateQueries({ queryKey: ['sessions'] });
    },
  });
  const problems = checked ? passwordProblems(draft) : {};
  const failure = change.error ? describeError(change.error) : undefined;
  const submit = () => {
    setChecked(true);
    if (Object.keys(passwordProblems(draft)).length === 0) change.mutate();
  };
  const set = (field: keyof PasswordDraft) => (value: string) => setDraft({ ...draft, [field]: value });
  return (
    <section className="panel" aria-labelledby="password-heading">
      <h2 id="password-heading">Password</h2>
      <Form label="Change your password" onSubmit={submit}>
        <Field label="Current password" name="current_password" type="password" autoComplete="current-password" value={draft.current_password} onChange={set('current_password')} required error={problems.current_password ?? failure?.fields.current_password} />
        <Field label="New password" name="new_password" type="password" autoComplete="new-password" value={draft.new_password} onChange={set('new_password')} required description="At least 8 characters." error={problems.new_password ?? failure?.fields.new_password} />
        <Field label="New password again" name="confirm_password" type="password" autoComplete="new-password" value={draft.confirm_password} onChange={set('confirm_password')} required error={problems.confirm_password} />
        <FormError message={failure && Object.keys(failure.fields).length === 0 ? failure.message : undefined} />
        <div className="actions">
          <Button type="submit" isPending={change.isPending}>
            Change password
          </Button>
          <span role="status" className="hint">
            {change.isSuccess ? 'Password changed. Your other sessions were signed out.' : ''}
          </span>
        </div>
      </Form>
    </section>
  );
}

export function ProfilePage() {
  const me = useMe();
  return (
    <>
      <PageTitle>Profile</PageTitle>
      <QueryView query={me} loadingLabel="Loading your profile…">
        {(user) => (
          <>
            <DetailsPanel key={user.id} user={user} />
            <VerificationPanel user={user} />
          </>
        )}
      </QueryView>
      <PasswordPanel />
      <SessionsPanel />
    </>
  );
}
