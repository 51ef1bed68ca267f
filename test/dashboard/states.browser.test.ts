import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { launchChromium } from '../../src/modules/widgets/browser-helpers.ts';
import { buildTestApp } from '../support/app.ts';
import { uniqueEmail } from '../support/fixtures.ts';
import { freePort } from '../support/ports.ts';
import { checkPage, failing, heading, openThroughStates, sessionOf, collectPageErrors } from './browser.ts';

// The states the journeys do not reach, in Debian's Chromium against the real platform on
// 127.0.0.1: the account pages (empty, refused, without their mailed link), the workspace loading
// and failing, each list page loading, failing (retried) and empty, each detail page loading and
// of an unknown id, an unknown address, a page whose code no longer loads; the calls list filtered
// by status, direction, agent and dates and exported with them; an API key's last use; the agents
// list and the workspace switcher by keyboard; a button keeping the keyboard focus while its
// request runs. Every state is checked (axe-core, 375 px, screenshots under test-artifacts/).

const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const t = await buildTestApp({ env: { PUBLIC_BASE_URL: origin } });
await t.app.listen({ port, host: '127.0.0.1' });

const email = uniqueEmail('states');
const password = 'correct horse battery';

// Each list page: its navigation link (and heading), the API path its main list reads, the name of
// its screenshots, and what a new workspace shows there.
const LIST_PAGES: Array<[link: string, path: string | RegExp, name: string, content: string]> = [
  ['Calls', '/v1/calls', 'calls', 'No calls match.'],
  ['API keys', '/v1/api-keys', 'api-keys', 'No API keys yet.'],
  ['Webhooks', '/v1/webhooks/deliveries', 'webhooks', 'No deliveries yet.'],
  ['Campaigns', '/v1/campaigns', 'campaigns', 'No campaigns yet.'],
  ['Schedules', '/v1/schedules', 'schedules', 'No schedules match.'],
  ['Voice sessions', '/v1/voice/sessions', 'voice-sessions', 'No voice sessions yet.'],
  ['Widgets', '/v1/widgets', 'widgets', 'No widgets yet.'],
  ['Analytics', '/v1/analytics/overview', 'analytics', 'No calls in the last 30 days.'],
  // The profile first: the members page reads the signed-in user too (and would cache it).
  ['Profile', '/v1/auth/me', 'profile', 'Your details'],
  ['Members', /^\/v1\/workspaces\/[^/]+\/members$/, 'members', email],
  ['Branding', '/v1/branding', 'branding', "No branding yet: public pages show the platform's own look."],
];

describe('every page state in Chromium', async () => {
  const browser = await launchChromium();
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  const errors = collectPageErrors(page);
  const api = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const { token, workspaceId } = await sessionOf(t, page);
    return t.request({ method, url, token, workspaceId, ...(payload ? { payload } : {}) });
  };
  let agentId = '';

  it('shows the account pages signed out: empty, refused, and without their mailed link', async () => {
    await page.goto(`${origin}/signup`);
    await heading(page, 'Create your account');
    await checkPage(page, 'signup');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.locator('.field-error').filter({ hasText: /8/ }).waitFor();
    await checkPage(page, 'signup-refused');

    await page.goto(`${origin}/forgot-password`);
    await heading(page, 'Reset your password');
    await checkPage(page, 'forgot-password');
    await page.getByLabel('Email').fill(uniqueEmail('nobody'));
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('status').filter({ hasText: 'a link to reset its password is on its way' }).waitFor();
    await checkPage(page, 'forgot-password-sent');

    await page.goto(`${origin}/reset-password`);
    await heading(page, 'Choose a new password');
    await page.getByText('This page needs the link from the reset mail.').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Change password' }).isDisabled(), true);
    await checkPage(page, 'reset-password-no-link');
    await page.goto(`${origin}/reset-password?token=not-a-real-token`);
    await page.getByLabel('New password', { exact: true }).fill('a brand new secret');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('alert').waitFor();
    await checkPage(page, 'reset-password-refused');

    await page.goto(`${origin}/verify-email`);
    await heading(page, 'Confirm your email');
    await page.getByRole('alert').filter({ hasText: 'This page needs the link from the verification mail.' }).waitFor();
    await checkPage(page, 'verify-email-no-link');
    await page.goto(`${origin}/verify-email?token=not-a-real-token`);
    await page.getByRole('button', { name: 'Confirm my email' }).click();
    await page.getByRole('alert').waitFor();
    await checkPage(page, 'verify-email-refused');
  });

  it('signs up, then opens the workspace through its loading and error states', async () => {
    await page.goto(`${origin}/signup`);
    await page.getByLabel('Name').fill('Hedy');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading(page, 'Agents');

    const broken = await failing(page, '/v1/workspaces');
    await page.reload();
    await page.getByRole('status').filter({ hasText: 'Opening your workspace…' }).waitFor();
    await checkPage(page, 'workspace-loading');
    broken.answer();
    await page.getByRole('alert').filter({ hasText: 'Something broke on our side.' }).waitFor();
    await checkPage(page, 'workspace-error');
    await broken.restore();
    await page.getByRole('button', { name: 'Try again' }).click();
    await heading(page, 'Agents');
  });

  it('shows the agents list loading, failing and empty, and creates an agent by keyboard alone', async () => {
    // A fresh load (no list in the cache) from another page, then the navigation.
    await page.goto(`${origin}/do-not-call`);
    await heading(page, 'Do not call');
    await openThroughStates(page, 'Agents', '/v1/agents', 'agents');
    await page.getByText('No agents yet.', { exact: true }).waitFor();
    await checkPage(page, 'agents-empty');

    // Opened, the page's heading has the focus; the next stop is the new agent's name; Enter
    // creates it.
    await page.reload();
    await heading(page, 'Agents');
    assert.equal(await page.evaluate('document.activeElement?.tagName'), 'H1');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement?.getAttribute("name")'), 'name');
    await page.keyboard.type('Night line');
    await page.keyboard.press('Enter');
    await heading(page, 'Night line');
    agentId = new URL(page.url()).pathname.split('/').at(-1)!;
    assert.equal((await api('GET', `/v1/agents/${agentId}`)).json().name, 'Night line');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents', exact: true }).click();
    await page.getByRole('link', { name: 'Night line' }).waitFor();
    await checkPage(page, 'agents');
  });

  for (const [link, path, name, content] of LIST_PAGES) {
    it(`shows ${link} loading, failing, then retried`, async () => {
      await openThroughStates(page, link, path, name);
      await page.getByText(content, { exact: true }).first().waitFor();
      await checkPage(page, `${name}-loaded`);
    });
  }

  it('shows each detail page loading, then an unknown agent, call, campaign, widget and knowledge base as errors, and an unknown address', async () => {
    for (const [path, read, name] of [
      ['/agents/agent_00000000000000000000000000', '/v1/agents/agent_00000000000000000000000000', 'agent-editor'],
      ['/calls/call_00000000000000000000000000', '/v1/calls/call_00000000000000000000000000', 'call'],
      ['/campaigns/cmp_00000000000000000000000000', '/v1/campaigns/cmp_00000000000000000000000000', 'campaign'],
      ['/widgets/wgt_00000000000000000000000000', '/v1/widgets/wgt_00000000000000000000000000', 'widget'],
      ['/knowledge-bases/kb_00000000000000000000000000', '/v1/knowledge-base/kb_00000000000000000000000000', 'knowledge-base'],
    ]) {
      // Its read held: the loading state; answered 500: the error state; retried: the platform's 404.
      const broken = await failing(page, read);
      await page.goto(`${origin}${path}`);
      await page.locator('.state-loading').first().waitFor();
      await checkPage(page, `${name}-loading`);
      broken.answer();
      const failed = page.getByRole('alert').filter({ hasText: 'Could not load this.' });
      await failed.filter({ hasText: 'Something broke on our side.' }).waitFor();
      await broken.restore();
      await failed.getByRole('button', { name: 'Try again' }).click();
      await failed.filter({ hasNotText: 'Something broke on our side.' }).waitFor();
      await checkPage(page, `${name}-error`);
    }
    await page.goto(`${origin}/nowhere`);
    await page.getByText('There is no page here.').waitFor();
    await page.getByRole('link', { name: 'Go to your agents' }).click();
    await heading(page, 'Agents');
    await page.goto(`${origin}/nowhere`);
    await page.getByText('There is no page here.').waitFor();
    await checkPage(page, 'not-found');
  });

  it('filters the calls by status, direction, agent and dates, and exports what the filters hold', async () => {
    const other = await api('POST', '/v1/agents', { name: 'Day line' });
    assert.equal(other.statusCode, 201, other.body);
    const placed = await api('POST', '/v1/calls/outbound', { agent_id: agentId, to: '+15550100300', simulation: { caller_script: ['Hello?'] } });
    assert.equal(placed.statusCode, 201, placed.body);
    const call = placed.json() as { id: string; status: string; created_at: string };
    // The call's day and its neighbours in the browser's time zone (the filters are days there),
    // from the call's creation, not the clock: a run crossing midnight keeps the same days.
    const day = (offset: number) => page.evaluate(`(() => { const d = new Date(${JSON.stringify(call.created_at)}); d.setDate(d.getDate() + ${offset}); return d.toLocaleDateString('en-CA'); })()`) as Promise<string>;
    const [yesterday, today, tomorrow] = [await day(-1), await day(0), await day(1)];
    const row = page.getByRole('row').filter({ hasText: '+15550100300' });
    const none = page.getByText('No calls match.');
    const exported = async () => {
      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Export CSV' }).click();
      return fs.readFileSync(String(await (await download).path()), 'utf8');
    };

    // Opened afresh: the agents' list (cached by the pages before) has the new agent.
    await page.goto(`${origin}/calls`);
    await heading(page, 'Calls');
    await row.waitFor();
    await page.getByLabel('Status').selectOption(call.status === 'failed' ? 'completed' : 'failed');
    await none.waitFor();
    await page.getByLabel('Status').selectOption('');
    await row.waitFor();
    await page.getByLabel('Direction').selectOption('inbound');
    await none.waitFor();
    await page.getByLabel('Direction').selectOption('outbound');
    await row.waitFor();
    await page.getByLabel('Agent').selectOption({ label: 'Day line' });
    await none.waitFor();
    assert.ok(!(await exported()).includes(call.id), "another agent's calls: not exported");
    await page.getByLabel('Agent').selectOption({ label: 'Night line' });
    await row.waitFor();

    await page.getByLabel('From').fill(tomorrow);
    await none.waitFor();
    assert.ok(!(await exported()).includes(call.id), 'a day after the call: not exported');
    await page.getByLabel('From').fill(yesterday);
    await page.getByLabel('To').fill(yesterday);
    await none.waitFor();
    await page.getByLabel('From').fill(today);
    await page.getByLabel('To').fill(today);
    await row.waitFor();
    assert.ok((await exported()).includes(call.id), 'the day of the call: exported');
    await checkPage(page, 'calls-filtered');
  });

  it("shows an API key's last use", async () => {
    const created = await api('POST', '/v1/api-keys', { name: 'Reporting', scope: 'read-only' });
    assert.equal(created.statusCode, 201, created.body);
    const key = created.json() as { id: string; key: string };
    assert.equal((await t.request({ method: 'GET', url: '/v1/agents', token: key.key })).statusCode, 200);
    // The use is written off the request's path: wait until the API has it.
    for (let i = 0; i < 100 && !(await api('GET', '/v1/api-keys')).json().data.find((k: { id: string }) => k.id === key.id).last_used_at; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await page.goto(`${origin}/api-keys`);
    await page.getByRole('row').filter({ hasText: 'Reporting' }).filter({ hasText: /from 127\.0\.0\.1/ }).waitFor();
  });

  it('keeps the keyboard focus on a button while its request runs, and after', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks', exact: true }).click();
    await heading(page, 'Webhooks');
    await page.getByLabel('Endpoint URL').fill('https://example.com/hooks');
    await page.getByRole('button', { name: 'Save endpoint' }).click();
    const send = page.getByRole('button', { name: 'Send test event' });
    await send.waitFor();
    // The request held until the button is seen pending.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let sent = 0;
    await page.route('**/v1/webhooks/test', async (route) => {
      sent++;
      await held;
      await route.continue();
    });
    await send.focus();
    await page.keyboard.press('Enter');
    await page.locator('button[data-busy]').filter({ hasText: 'Send test event' }).waitFor();
    const focused = 'document.activeElement?.textContent';
    assert.equal(await page.evaluate(focused), 'Send test event', 'focused while pending');
    assert.equal(await send.getAttribute('aria-disabled'), 'true');
    await page.keyboard.press('Enter'); // ignored while pending
    release();
    await page.getByText('Test event queued').waitFor();
    await page.unrouteAll();
    assert.equal(await page.evaluate(focused), 'Send test event', 'focused after');
    assert.equal(await send.getAttribute('aria-disabled'), null);
    assert.equal(sent, 1, 'one test event for two presses');
  });

  it('switches workspaces by keyboard: each shows its own agents', async () => {
    assert.equal((await api('POST', '/v1/workspaces', { name: 'Second shop' })).statusCode, 201);
    await page.goto(`${origin}/agents`);
    await page.getByRole('link', { name: 'Night line' }).waitFor();
    const switcher = page.getByLabel('Workspace');
    // The arrow keys choose on a closed select: towards the other workspace, then back.
    const [there, back] = (await page.evaluate("document.getElementById('workspace-switcher').selectedIndex")) === 0 ? ['ArrowDown', 'ArrowUp'] : ['ArrowUp', 'ArrowDown'];
    await switcher.focus();
    await page.keyboard.press(there);
    await page.getByText('No agents yet.', { exact: true }).waitFor();
    assert.equal(await switcher.inputValue(), (await sessionOf(t, page)).workspaceId);
    assert.equal(await page.evaluate(`document.activeElement?.id`), 'workspace-switcher', 'the focus stays on the switcher');
    await page.keyboard.press(back);
    await page.getByRole('link', { name: 'Night line' }).waitFor();
  });

  it("says when a page's code no longer loads (a tab open across an upgrade), and reloads on retry", async () => {
    await page.route('**/assets/audit-log-*.js', (route) => route.fulfill({ status: 404, contentType: 'text/plain', body: 'gone' }));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log', exact: true }).click();
    const failed = page.getByRole('alert').filter({ hasText: 'Could not load this.' });
    await failed.waitFor();
    await checkPage(page, 'page-code-missing');
    await page.unrouteAll();
    await failed.getByRole('button', { name: 'Try again' }).click();
    await heading(page, 'Audit log');
  });

  it('logged no error in the page', () => {
    assert.deepEqual(errors, []);
  });
});
