import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium } from '../../src/modules/widgets/browser-helpers.ts';
import { buildTestApp } from '../support/app.ts';
import { uniqueEmail } from '../support/fixtures.ts';
import { sentMails } from '../support/mail.ts';
import { freePort } from '../support/ports.ts';
import { checkPage, collectPageErrors, heading, sessionOf } from './browser.ts';

// The people pages in Debian's Chromium against the real platform on 127.0.0.1: the owner's
// profile (name, password, email confirmation from a new mail, a new address), members and
// invitations (one invited by keyboard, one revoked), the mailed link refused to another address,
// the invitee signing up from it in a second browser and joining, a role change and the last owner
// kept, the audit log of those actions (its loading and error states, filters, paging; a member's
// view), a member removed, and the analytics of a sandbox call. Each action is checked through the
// API. Steps build on each other, as a user's would.

const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const t = await buildTestApp({ env: { PUBLIC_BASE_URL: origin, SANDBOX_SPEED: 'max' } });
await t.app.listen({ port, host: '127.0.0.1' });
await t.modules.calls.worker.start();

const ownerEmail = uniqueEmail('owner');
const ownerNewEmail = uniqueEmail('owner-new');
const inviteeEmail = uniqueEmail('grace');
const strangerEmail = uniqueEmail('stranger');
const password = 'correct horse battery';
const newPassword = 'a much better secret';

/** The link of the last mail to `to` whose purpose matches. */
function mailedLink(to: string, purpose: string): URL {
  const mail = sentMails(t)
    .filter((m) => m.to === to && m.meta?.purpose === purpose)
    .at(-1);
  const link = mail?.meta?.link ?? mail?.text.match(/https?:\/\/\S+/)?.[0];
  assert.ok(link, `a ${purpose} mail to ${to}`);
  return new URL(link);
}

/** Polls `check` (not with waitForFunction: its string polling is refused by the dashboard's CSP). */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const dialogIn = (page: Page, name: string | RegExp) => page.getByRole('dialog', { name }).or(page.getByRole('alertdialog', { name }));

describe('the people pages in Chromium', async () => {
  const browser = await launchChromium();
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  const errors = collectPageErrors(page);
  const api = async () => sessionOf(t, page);
  let ownerId = '';
  let inviteeId = '';

  it('signs the owner up, saves the name and a new password, and confirms the email from a new mail', async () => {
    await page.goto(`${origin}/signup`);
    await page.getByLabel('Name').fill('Ada');
    await page.getByLabel('Email').fill(ownerEmail);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading(page, 'Agents');

    await page.getByRole('link', { name: 'Profile' }).click();
    await heading(page, 'Profile');
    await page.getByTestId('verification-state').getByText('Not confirmed').waitFor();
    await page.getByRole('row').filter({ hasText: 'This session' }).waitFor();
    await checkPage(page, 'profile');

    await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
    await page.getByRole('button', { name: 'Save details' }).click();
    await page.getByText('Saved', { exact: true }).waitFor();
    const { token } = await api();
    const me = (await t.request({ method: 'GET', url: '/v1/auth/me', token })).json();
    ownerId = me.id;
    assert.equal(me.name, 'Ada Lovelace');

    const passwordForm = page.getByRole('form', { name: 'Change your password' });
    await passwordForm.getByLabel('Current password').fill('not my password');
    await passwordForm.getByLabel('New password', { exact: true }).fill(newPassword);
    await passwordForm.getByLabel('New password again').fill('a different one');
    await passwordForm.getByRole('button', { name: 'Change password' }).click();
    await passwordForm.getByText('The two new passwords differ.').waitFor();
    await passwordForm.getByLabel('New password again').fill(newPassword);
    await passwordForm.getByRole('button', { name: 'Change password' }).click();
    // The platform's refusal of the wrong current password, on its field.
    await passwordForm.locator('.field-error').getByText(/incorrect/).waitFor();
    await passwordForm.getByLabel('Current password').fill(password);
    await passwordForm.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed. Your other sessions were signed out.').waitFor();
    assert.equal((await t.request({ method: 'POST', url: '/v1/auth/login', payload: { email: ownerEmail, password } })).statusCode, 401);
    assert.equal((await t.request({ method: 'POST', url: '/v1/auth/login', payload: { email: ownerEmail, password: newPassword } })).statusCode, 200);
    assert.equal((await t.request({ method: 'GET', url: '/v1/auth/me', token })).statusCode, 200, 'this session lives on');

    // Another session (a login elsewhere) is listed and signed out from here.
    const elsewhere = (await t.request({ method: 'POST', url: '/v1/auth/login', payload: { email: ownerEmail, password: newPassword }, headers: { 'user-agent': 'Elsewhere/1.0' } })).json();
    await page.reload();
    const otherSession = page.getByRole('row').filter({ hasText: 'Elsewhere/1.0' });
    await otherSession.getByRole('button', { name: /^Sign out/ }).click();
    await otherSession.waitFor({ state: 'detached' });
    assert.equal((await t.request({ method: 'GET', url: '/v1/auth/me', token: elsewhere.access_token })).statusCode, 401);
    assert.equal((await t.request({ method: 'GET', url: '/v1/auth/me', token })).statusCode, 200);

    const mailsBefore = sentMails(t).filter((m) => m.to === ownerEmail && m.meta?.purpose === 'verify_email').length;
    await page.getByRole('button', { name: 'Send the confirmation mail again' }).click();
    await page.getByText(`A confirmation mail is on its way to ${ownerEmail}.`, { exact: false }).waitFor();
    assert.equal(sentMails(t).filter((m) => m.to === ownerEmail && m.meta?.purpose === 'verify_email').length, mailsBefore + 1);
    const verify = mailedLink(ownerEmail, 'verify_email');
    await page.goto(`${origin}${verify.pathname}${verify.search}`);
    await page.getByRole('button', { name: 'Confirm my email' }).click();
    await page.getByText(`${ownerEmail} is confirmed.`).waitFor();
    await page.goto(`${origin}/profile`);
    await page.getByTestId('verification-state').getByText('Confirmed', { exact: true }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Send the confirmation mail again' }).count(), 0);
  });

  it('changes the email address with the current password: unconfirmed again until its link', async () => {
    const details = page.getByRole('form', { name: 'Your details' });
    assert.equal(await details.getByLabel('Current password').count(), 0, 'asked only for a new address');
    await details.getByLabel('Email').fill(ownerNewEmail);
    await details.getByLabel('Current password').fill(newPassword);
    await details.getByRole('button', { name: 'Save details' }).click();
    await page.getByText(`Saved. A confirmation mail is on its way to ${ownerNewEmail}.`).waitFor();
    await page.getByTestId('verification-state').getByText('Not confirmed').waitFor();
    const { token } = await api();
    const me = (await t.request({ method: 'GET', url: '/v1/auth/me', token })).json();
    assert.deepEqual([me.email, me.email_verified], [ownerNewEmail, false]);
    mailedLink(ownerNewEmail, 'verify_email');
  });

  it('invites by keyboard, refuses a bad address, and revokes a pending invitation', async () => {
    await page.getByRole('link', { name: 'Members' }).click();
    await heading(page, 'Members');
    await page.getByRole('row').filter({ hasText: '(you)' }).getByText('owner', { exact: true }).waitFor();
    await page.getByText('No pending invitations.').waitFor();
    await checkPage(page, 'members');

    await page.getByLabel('Email to invite').fill('not-an-email');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.locator('.field-error').waitFor();

    // Keyboard alone: the address, Tab to the role (member by default), Tab to the button, Enter.
    await page.getByLabel('Email to invite').fill('');
    await page.getByLabel('Email to invite').focus();
    await page.keyboard.type(inviteeEmail);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByText(`Invitation sent to ${inviteeEmail}`, { exact: false }).waitFor();
    await page.getByRole('row').filter({ hasText: inviteeEmail }).getByText('member', { exact: true }).waitFor();

    await page.getByLabel('Email to invite').fill(strangerEmail);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByRole('row').filter({ hasText: strangerEmail }).getByText('viewer', { exact: true }).waitFor();
    await checkPage(page, 'members-invitations');
    await page.getByRole('button', { name: `Revoke the invitation of ${strangerEmail}` }).click();
    await page.getByText(`The invitation of ${strangerEmail} is revoked`, { exact: false }).waitFor();
    await page.getByRole('row').filter({ hasText: strangerEmail }).waitFor({ state: 'detached' });

    const { token, workspaceId } = await api();
    const pending = (await t.request({ method: 'GET', url: `/v1/workspaces/${workspaceId}/invitations`, token })).json().data as Array<{ email: string; role: string }>;
    assert.deepEqual(pending.map((i) => [i.email, i.role]), [[inviteeEmail, 'member']]);
  });

  it('the invitee signs up from the mailed link in another browser, accepts, and sees the workspace', async () => {
    const link = mailedLink(inviteeEmail, 'invitation');
    assert.match(link.pathname, /^\/invitations\/iv_/);
    // Opened by someone signed in with another address: refused in words, with a way to switch.
    await page.goto(`${origin}${link.pathname}`);
    await heading(page, 'Join a workspace');
    await page.getByRole('button', { name: 'Accept the invitation' }).click();
    await page.getByRole('alert').getByText(/another email address/).waitFor();
    await page.getByRole('button', { name: 'Sign in with another address' }).waitFor();
    await checkPage(page, 'invitation-other-address');

    const other = await launchChromium();
    const invitee = await other.newPage();
    invitee.setDefaultTimeout(15_000);
    collectPageErrors(invitee, errors);
    await invitee.goto(`${origin}${link.pathname}`);
    await heading(invitee, 'Log in');
    await invitee.getByRole('link', { name: 'Create an account' }).click();
    await invitee.getByLabel('Name').fill('Grace');
    await invitee.getByLabel('Email').fill(inviteeEmail);
    await invitee.getByLabel('Password').fill(password);
    await invitee.getByRole('button', { name: 'Create account' }).click();
    // Back on the invitation after signing up.
    await heading(invitee, 'Join a workspace');
    await checkPage(invitee, 'invitation');
    await invitee.getByRole('button', { name: 'Accept the invitation' }).click();
    await invitee.getByText("You joined Ada's workspace as member.").waitFor();
    const { workspaceId } = await api();
    await until(async () => (await invitee.locator('#workspace-switcher').inputValue()) === workspaceId, 'the joined workspace chosen');
    await invitee.getByRole('link', { name: 'See its members' }).click();
    await heading(invitee, 'Members');
    await invitee.getByRole('row').filter({ hasText: ownerNewEmail }).getByText('owner', { exact: true }).waitFor();
    await invitee.getByRole('row').filter({ hasText: '(you)' }).getByText('member', { exact: true }).waitFor();
    await invitee.getByText('only owners and admins invite and manage members', { exact: false }).waitFor();
    assert.equal(await invitee.getByRole('button', { name: /^Change role/ }).count(), 0);
    await checkPage(invitee, 'members-as-member');

    // A member does not read the audit log: the page says why.
    await invitee.getByRole('link', { name: 'Audit log' }).click();
    await heading(invitee, 'Audit log');
    await invitee.getByText('Only owners and admins read the audit log.').waitFor();
    await checkPage(invitee, 'audit-log-as-member');

    // A spent link is refused in words.
    await invitee.goto(`${origin}${link.pathname}`);
    await invitee.getByRole('button', { name: 'Accept the invitation' }).click();
    await invitee.getByRole('alert').getByText(/already/).waitFor();
    await other.close();

    const { token } = await api();
    const members = (await t.request({ method: 'GET', url: `/v1/workspaces/${workspaceId}/members`, token })).json().data as Array<{ user_id: string; email: string; role: string }>;
    const joined = members.find((m) => m.email === inviteeEmail);
    assert.equal(joined?.role, 'member');
    inviteeId = String(joined?.user_id);
  });

  it("changes the invitee's role, and keeps the last owner", async () => {
    await page.goto(`${origin}/members`);
    await heading(page, 'Members');
    await page.getByRole('button', { name: 'Change role of Grace' }).click();
    const dialog = dialogIn(page, 'Change the role of Grace');
    await dialog.getByLabel('Role').selectOption('admin');
    await dialog.getByRole('button', { name: 'Save role' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('row').filter({ hasText: inviteeEmail }).getByText('admin', { exact: true }).waitFor();
    const { token, workspaceId } = await api();
    const members = (await t.request({ method: 'GET', url: `/v1/workspaces/${workspaceId}/members`, token })).json().data as Array<{ user_id: string; role: string }>;
    assert.equal(members.find((m) => m.user_id === inviteeId)?.role, 'admin');

    await page.getByRole('button', { name: 'Change role of Ada Lovelace' }).click();
    const own = dialogIn(page, 'Change the role of Ada Lovelace');
    await own.getByLabel('Role').selectOption('member');
    await own.getByRole('button', { name: 'Save role' }).click();
    await own.getByRole('alert').getByText(/owner/).waitFor();
    await checkPage(page, 'members-last-owner');
    await page.keyboard.press('Escape');
    await own.waitFor({ state: 'detached' });
    // Nor may the last owner leave.
    await page.getByRole('button', { name: 'Leave this workspace' }).click();
    const leave = dialogIn(page, "Leave Ada's workspace?");
    await leave.getByRole('button', { name: 'Leave workspace' }).click();
    await leave.getByRole('alert').getByText(/owner/).waitFor();
    await leave.getByRole('button', { name: 'Cancel' }).click();
    await leave.waitFor({ state: 'detached' });
    const still = (await t.request({ method: 'GET', url: `/v1/workspaces/${workspaceId}/members`, token })).json().data as Array<{ user_id: string; role: string }>;
    assert.equal(still.find((m) => m.user_id === ownerId)?.role, 'owner');
  });

  it('shows those actions in the audit log, filters by who and by date, and pages', async () => {
    // The entries held: the loading state; then a refusal: the error state; Try again loads them.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await browser.route('**/v1/audit-log?*', async (route) => {
      await held;
      await route.fulfill({ status: 403, contentType: 'application/problem+json', body: JSON.stringify({ code: 'insufficient_scope', status: 403, detail: 'This key may only read.' }) });
    });
    await page.getByRole('link', { name: 'Audit log' }).click();
    await heading(page, 'Audit log');
    await page.locator('.state-loading').first().waitFor();
    await checkPage(page, 'audit-log-loading');
    release();
    await page.getByRole('alert').getByText('This key may only read.').waitFor();
    await checkPage(page, 'audit-log-error');
    await browser.unrouteAll();
    await page.getByRole('button', { name: 'Try again' }).click();
    const row = (action: string) => page.getByRole('row').filter({ has: page.getByText(action, { exact: true }) });
    const cell = (text: string) => page.getByRole('cell', { name: text, exact: true });
    await row('invitations.accept').filter({ hasText: inviteeEmail }).waitFor();
    await row('workspaces.members').filter({ hasText: ownerNewEmail }).first().waitFor();
    await row('workspaces.invitations.delete').waitFor();
    await row('workspaces.members.update').filter({ has: cell('200') }).filter({ has: cell(inviteeId) }).waitFor();
    await row('workspaces.members.update').filter({ has: cell('409') }).filter({ has: cell(ownerId) }).waitFor();
    await checkPage(page, 'audit-log');

    await page.getByLabel('Who', { exact: true }).selectOption({ label: inviteeEmail });
    await row('invitations.accept').waitFor();
    await page.getByRole('row').filter({ hasText: ownerNewEmail }).waitFor({ state: 'detached' });
    assert.equal(await page.locator('tbody tr').count(), 1);
    await page.getByLabel('Who', { exact: true }).selectOption({ label: 'Anyone' });
    const tomorrow = new Date(Date.now() + 86_400_000);
    const day = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    await page.getByLabel('From', { exact: true }).fill(day(tomorrow));
    await page.getByText('No entries match.').waitFor();
    await checkPage(page, 'audit-log-empty');
    await page.getByLabel('To', { exact: true }).fill(day(new Date()));
    await page.getByText('The "To" date is before the "From" date.').waitFor();
    await page.getByLabel('From', { exact: true }).fill('');
    await row('invitations.accept').waitFor();

    // Enough writes for a second page (25 a page).
    const { token, workspaceId } = await api();
    for (let i = 0; i < 26; i++) {
      const created = await t.request({ method: 'POST', url: '/v1/agents', token, workspaceId, payload: { name: `Agent ${i}` } });
      assert.equal(created.statusCode, 201, created.body);
    }
    const total = (await t.request({ method: 'GET', url: '/v1/audit-log?limit=100', token, workspaceId })).json().data.length as number;
    await page.getByLabel('To', { exact: true }).fill('');
    await page.reload();
    await heading(page, 'Audit log');
    await row('agents.create').first().waitFor();
    assert.equal(await page.locator('tbody tr').count(), 25);
    await page.getByRole('button', { name: 'Older entries' }).click();
    await page.getByText('Page 2').waitFor();
    await row('invitations.accept').waitFor();
    assert.equal(await page.locator('tbody tr').count(), total - 25);
    assert.equal(await page.getByRole('button', { name: 'Older entries' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Newer entries' }).click();
    await page.getByText('Page 1').waitFor();
    await row('invitations.accept').waitFor({ state: 'detached' });
    assert.equal(await page.locator('tbody tr').count(), 25);
  });

  it('removes a member: gone from the page and from the workspace, and in the audit log', async () => {
    await page.getByRole('link', { name: 'Members' }).click();
    await heading(page, 'Members');
    await page.getByRole('button', { name: 'Remove Grace' }).click();
    const dialog = dialogIn(page, 'Remove Grace?');
    await dialog.getByRole('button', { name: 'Remove member' }).click();
    await page.getByRole('row').filter({ hasText: inviteeEmail }).waitFor({ state: 'detached' });
    const { token, workspaceId } = await api();
    const members = (await t.request({ method: 'GET', url: `/v1/workspaces/${workspaceId}/members`, token })).json().data as Array<{ user_id: string }>;
    assert.deepEqual(members.map((m) => m.user_id), [ownerId]);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('row').filter({ has: page.getByText('workspaces.members.delete', { exact: true }) }).filter({ hasText: inviteeId }).waitFor();
    // A former member is no longer in the "Who" list: picked from the table instead (on page 2).
    await page.getByRole('button', { name: 'Older entries' }).click();
    await page.getByRole('button', { name: `Show only ${inviteeEmail}` }).click();
    await page.getByRole('row').filter({ hasText: ownerNewEmail }).first().waitFor({ state: 'detached' });
    await page.getByRole('row').filter({ has: page.getByText('invitations.accept', { exact: true }) }).waitFor();
    assert.equal(await page.locator('tbody tr').count(), 1);
    assert.equal(await page.getByLabel('Who', { exact: true }).inputValue(), inviteeId);
  });

  it('shows the analytics: empty first, then a sandbox call in figures, outcomes and the chart', async () => {
    const { token, workspaceId } = await api();
    const other = await t.request({ method: 'POST', url: '/v1/agents', token, workspaceId, payload: { name: 'Quiet agent' } });
    const agent = await t.request({ method: 'POST', url: '/v1/agents', token, workspaceId, payload: { name: 'Front desk', first_message: 'Hello, Acme here.' } });
    assert.equal(agent.statusCode, 201, agent.body);
    await page.getByRole('link', { name: 'Analytics' }).click();
    await heading(page, 'Analytics');
    await page.getByText('No calls in the last 30 days.').waitFor();
    await checkPage(page, 'analytics-empty');

    const placed = await t.request({ method: 'POST', url: '/v1/calls/outbound', token, workspaceId, payload: { agent_id: agent.json().id, to: '+15550100200', simulation: { caller_script: ['Hi, are you open today?', 'Thanks, goodbye!'] } } });
    assert.equal(placed.statusCode, 201, placed.body);
    const deadline = Date.now() + 60_000;
    let call = placed.json();
    while (!['completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled'].includes(call.status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      call = (await t.request({ method: 'GET', url: `/v1/calls/${call.id}`, token, workspaceId })).json();
    }
    const overview = (await t.request({ method: 'GET', url: '/v1/analytics/overview', token, workspaceId })).json();
    assert.equal(overview.total_calls, 1, JSON.stringify(call));

    await page.reload();
    await heading(page, 'Analytics');
    const fact = (name: string) => page.locator(`[data-field="${name}"] dd`);
    await fact('Calls').getByText('1', { exact: true }).waitFor();
    assert.equal(await fact('Cost').textContent(), new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 }).format(overview.cost_usd));
    assert.equal(await fact('Connected minutes').textContent(), `${new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(overview.minutes)} min`);
    await page.getByRole('row').filter({ hasText: call.status.replaceAll('_', ' ') }).filter({ hasText: '100.0 %' }).waitFor();
    // The call's UTC day, not the clock's: a run crossing midnight puts it on yesterday's bar.
    const callDay = String(call.created_at).slice(0, 10);
    assert.match(callDay, /^\d{4}-\d{2}-\d{2}$/);
    const bar = page.locator(`[data-testid="calls-chart"] rect[data-date="${callDay}"]`);
    assert.equal(await bar.getAttribute('data-value'), '1');
    assert.ok(Number(await bar.getAttribute('height')) > 100, 'the only call fills the scale');
    assert.equal(await page.locator('[data-testid="calls-chart"] rect.chart-bar').count(), 30);
    await checkPage(page, 'analytics');

    await page.getByLabel('Period', { exact: true }).selectOption('7');
    await until(async () => (await page.locator('[data-testid="calls-chart"] rect.chart-bar').count()) === 7, 'a bar for each of 7 days');
    await page.getByLabel('Chart', { exact: true }).selectOption('cost_usd');
    await page.getByRole('heading', { name: 'Cost per day, every agent' }).waitFor();
    assert.match(String(await page.locator('[data-testid="calls-chart"] title').first().textContent()), /\$/);
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Quiet agent' });
    await page.getByText('No calls in the last 7 days.').waitFor();
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Front desk' });
    await fact('Calls').getByText('1', { exact: true }).waitFor();
    assert.equal(other.statusCode, 201);
  });

  it('logged no error in the pages', () => {
    assert.deepEqual(errors, []);
  });
});
