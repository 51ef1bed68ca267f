import { useMutation } from '@tanstack/react-query';
import { ApiError } from '@voice-agent-platform/sdk';
import { Link } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useSession } from '../api/session.tsx';
import { useWorkspace } from '../api/workspace.tsx';
import { Button, FormError } from '../ui/form.tsx';
import { PageTitle } from '../ui/shell.tsx';
import { useMe } from './me-query.ts';

// An invitation mail's link (/invitations/<token>). Signed out, the app sends the visitor to log
// in or sign up and back here; signed in, accepting joins the workspace and opens it. An
// invitation for another address says so, with a way to sign in as that address.

export function InvitationPage({ token }: { token: string }) {
  const { api, select } = useWorkspace();
  const { signOut } = useSession();
  const me = useMe();
  const accept = useMutation({
    mutationFn: () => api.invitations.accept(token),
    onSuccess: (accepted) => select(accepted.workspace.id),
  });
  const otherAddress = accept.error instanceof ApiError && accept.error.status === 403;
  return (
    <>
      <PageTitle>Join a workspace</PageTitle>
      <section className="panel" aria-labelledby="invitation-heading">
        <h2 id="invitation-heading">Your invitation</h2>
        {accept.data ? (
          <div role="status">
            <p>
              You joined <strong>{accept.data.workspace.name}</strong> as {accept.data.member.role}.
            </p>
            <p className="actions">
              <Link href="/agents">Open its agents</Link>
              <Link href="/members">See its members</Link>
            </p>
          </div>
        ) : (
          <>
            <p>{me.data ? `Accept to join the workspace as ${me.data.email}. The invitation must have been sent to this address.` : 'Accept to join the workspace with the account you are signed in with.'}</p>
            <FormError message={accept.error ? describeError(accept.error).message : undefined} />
            <div className="actions">
              <Button onPress={() => accept.mutate()} isPending={accept.isPending}>
                Accept the invitation
              </Button>
              {otherAddress ? (
                <Button variant="secondary" onPress={() => void signOut()}>
                  Sign in with another address
                </Button>
              ) : null}
            </div>
          </>
        )}
      </section>
    </>
  );
}
