import type { VoiceAgent } from '@voice-agent-platform/sdk';
import { Redirect, Route, Switch, useLocation } from 'wouter';
import { NEXT_KEY, useSession } from './api/session.tsx';
import { useWorkspaces, WorkspaceProvider } from './api/workspace.tsx';
import { AgentEditorPage } from './pages/agent-editor.tsx';
import { AgentsPage } from './pages/agents.tsx';
import { AnalyticsPage } from './pages/analytics.tsx';
import { ApiKeysPage } from './pages/api-keys.tsx';
import { AuditLogPage } from './pages/audit-log.tsx';
import { ForgotPasswordPage, LoginPage, ResetPasswordPage, SignupPage, VerifyEmailPage } from './pages/auth.tsx';
import { BillingPage } from './pages/billing.tsx';
import { CallPage } from './pages/call.tsx';
import { CallsPage } from './pages/calls.tsx';
import { DoNotCallPage } from './pages/do-not-call.tsx';
import { KnowledgeBasePage } from './pages/knowledge-base.tsx';
import { KnowledgeBasesPage } from './pages/knowledge-bases.tsx';
import { PhoneNumbersPage } from './pages/phone-numbers.tsx';
import { InvitationPage } from './pages/invitation.tsx';
import { MembersPage } from './pages/members.tsx';
import { ProfilePage } from './pages/profile.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { Shell } from './ui/shell.tsx';
import { Empty, ErrorState, Loading } from './ui/states.tsx';

// The routes. Signed out, only the account pages exist (any other address leads to the login);
// signed in, the account pages lead to the agents.

function SignedIn({ client }: { client: VoiceAgent }) {
  const workspaces = useWorkspaces(client);
  if (workspaces.isPending) return <Loading label="Opening your workspace…" />;
  if (workspaces.isError) return <ErrorState error={workspaces.error} retry={() => void workspaces.refetch()} />;
  if (workspaces.data.length === 0) return <Empty title="You belong to no workspace." />;
  return (
    <WorkspaceProvider client={client} workspaces={workspaces.data}>
      <Shell>
        <Switch>
          <Route path="/agents" component={AgentsPage} />
          <Route path="/agents/:id">{(params) => <AgentEditorPage id={params.id} />}</Route>
          <Route path="/calls" component={CallsPage} />
          <Route path="/calls/:id">{(params) => <CallPage id={params.id} />}</Route>
          <Route path="/api-keys" component={ApiKeysPage} />
          <Route path="/webhooks" component={WebhooksPage} />
          <Route path="/billing" component={BillingPage} />
          <Route path="/knowledge-bases" component={KnowledgeBasesPage} />
          <Route path="/knowledge-bases/:id">{(params) => <KnowledgeBasePage id={params.id} />}</Route>
          <Route path="/phone-numbers" component={PhoneNumbersPage} />
          <Route path="/do-not-call" component={DoNotCallPage} />
          <Route path="/profile" component={ProfilePage} />
          <Route path="/members" component={MembersPage} />
          <Route path="/invitations/:token">{(params) => <InvitationPage token={params.token} />}</Route>
          <Route path="/audit-log" component={AuditLogPage} />
          <Route path="/analytics" component={AnalyticsPage} />
          <Route path="/">
            <Redirect to="/agents" replace />
          </Route>
          <Route>
            <Empty title="There is no page here.">
              <a href="/agents">Go to your agents</a>
            </Empty>
          </Route>
        </Switch>
      </Shell>
    </WorkspaceProvider>
  );
}

const ACCOUNT_PAGES = ['/login', '/signup', '/forgot-password', '/reset-password', '/verify-email'];
/** Opened from a mail's link: shown signed in or out. */
const MAIL_PAGES = ['/reset-password', '/verify-email'];

export function App() {
  const { client } = useSession();
  const [location] = useLocation();
  if (client && ACCOUNT_PAGES.includes(location) && !MAIL_PAGES.includes(location)) return <Redirect to="/agents" replace />;
  if (!client && !ACCOUNT_PAGES.includes(location)) {
    // Back here after logging in (a link to a call, say).
    if (location !== '/') sessionStorage.setItem(NEXT_KEY, location);
    return <Redirect to="/login" replace />;
  }
  return (
    <Switch>
      <Route path="/login" component={LoginPage} />
      <Route path="/signup" component={SignupPage} />
      <Route path="/forgot-password" component={ForgotPasswordPage} />
      <Route path="/reset-password" component={ResetPasswordPage} />
      <Route path="/verify-email" component={VerifyEmailPage} />
      <Route>{client ? <SignedIn client={client} /> : null}</Route>
    </Switch>
  );
}
