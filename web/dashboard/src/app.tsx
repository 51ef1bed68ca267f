import type { VoiceAgent } from '@voice-agent-platform/sdk';
import { type ComponentType, lazy, Suspense } from 'react';
import { Redirect, Route, Switch, useLocation } from 'wouter';
import { NEXT_KEY, useSession } from './api/session.tsx';
import { useWorkspaces, WorkspaceProvider } from './api/workspace.tsx';
import { ForgotPasswordPage, LoginPage, ResetPasswordPage, SignupPage, VerifyEmailPage } from './pages/auth.tsx';
import { Shell } from './ui/shell.tsx';
import { Empty, ErrorState, Loading } from './ui/states.tsx';

// Each signed-in page is its own chunk, loaded when first opened: the first load carries the
// shell, the account pages and the libraries, not every page. A chunk that no longer loads (a tab
// open across an upgrade asks for the old build's) shows the error state; its retry reloads.
function page<P extends object>(load: () => Promise<ComponentType<P>>) {
  return lazy(async () => {
    try {
      return { default: await load() };
    } catch (error) {
      return { default: () => <ErrorState error={error} retry={() => location.reload()} /> };
    }
  });
}
const AgentEditorPage = page(async () => (await import('./pages/agent-editor.tsx')).AgentEditorPage);
const AgentsPage = page(async () => (await import('./pages/agents.tsx')).AgentsPage);
const AnalyticsPage = page(async () => (await import('./pages/analytics.tsx')).AnalyticsPage);
const ApiKeysPage = page(async () => (await import('./pages/api-keys.tsx')).ApiKeysPage);
const AuditLogPage = page(async () => (await import('./pages/audit-log.tsx')).AuditLogPage);
const BillingPage = page(async () => (await import('./pages/billing.tsx')).BillingPage);
const BrandingPage = page(async () => (await import('./pages/branding.tsx')).BrandingPage);
const CampaignPage = page(async () => (await import('./pages/campaign.tsx')).CampaignPage);
const CampaignsPage = page(async () => (await import('./pages/campaigns.tsx')).CampaignsPage);
const NewCampaignPage = page(async () => (await import('./pages/campaigns.tsx')).NewCampaignPage);
const CallPage = page(async () => (await import('./pages/call.tsx')).CallPage);
const CallsPage = page(async () => (await import('./pages/calls.tsx')).CallsPage);
const DoNotCallPage = page(async () => (await import('./pages/do-not-call.tsx')).DoNotCallPage);
const KnowledgeBasePage = page(async () => (await import('./pages/knowledge-base.tsx')).KnowledgeBasePage);
const KnowledgeBasesPage = page(async () => (await import('./pages/knowledge-bases.tsx')).KnowledgeBasesPage);
const PhoneNumbersPage = page(async () => (await import('./pages/phone-numbers.tsx')).PhoneNumbersPage);
const InvitationPage = page(async () => (await import('./pages/invitation.tsx')).InvitationPage);
const MembersPage = page(async () => (await import('./pages/members.tsx')).MembersPage);
const ProfilePage = page(async () => (await import('./pages/profile.tsx')).ProfilePage);
const SchedulesPage = page(async () => (await import('./pages/schedules.tsx')).SchedulesPage);
const VoiceSessionsPage = page(async () => (await import('./pages/voice-sessions.tsx')).VoiceSessionsPage);
const WebhooksPage = page(async () => (await import('./pages/webhooks.tsx')).WebhooksPage);
const WidgetEditorPage = page(async () => (await import('./pages/widget-editor.tsx')).WidgetEditorPage);
const WidgetsPage = page(async () => (await import('./pages/widgets.tsx')).WidgetsPage);

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
        <Suspense fallback={<Loading label="Opening the page…" />}>
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
            <Route path="/campaigns" component={CampaignsPage} />
            <Route path="/campaigns/new" component={NewCampaignPage} />
            <Route path="/campaigns/:id">{(params) => <CampaignPage id={params.id} />}</Route>
            <Route path="/schedules" component={SchedulesPage} />
            <Route path="/voice-sessions" component={VoiceSessionsPage} />
            <Route path="/widgets" component={WidgetsPage} />
            <Route path="/widgets/:id">{(params) => <WidgetEditorPage id={params.id} />}</Route>
            <Route path="/branding" component={BrandingPage} />
            <Route path="/">
              <Redirect to="/agents" replace />
            </Route>
            <Route>
              <Empty title="There is no page here.">
                <a href="/agents">Go to your agents</a>
              </Empty>
            </Route>
          </Switch>
        </Suspense>
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
