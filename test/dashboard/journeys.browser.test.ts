import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { after, describe, it } from 'node:test';
import { decodeJwt, SignJWT } from 'jose';
import type { Page } from 'playwright-core';
import { artifact, launchChromium } from '../../src/modules/widgets/browser-helpers.ts';
import { clock } from '../../web/dashboard/src/ui/format.ts';
import { buildTestApp } from '../support/app.ts';
import { uniqueEmail } from '../support/fixtures.ts';
import { sentMails } from '../support/mail.ts';
import { freePort } from '../support/ports.ts';
import { heading, checkPage, sessionOf, collectPageErrors, playToEnd } from './browser.ts';

// The dashboard in Debian's Chromium against the real platform on 127.0.0.1: one app, one
// browser, one page walking the journeys in order (each step builds on the last, as a user
// would): sign up, log out and in by keyboard, create and edit an agent (its webhook secret
// shown once), a sandbox call placed from its test panel, found on the calls page, with its
// transcript and a recording played to the end, an API key shown once then revoked, a failed
// webhook replayed, a sandbox top-up; every page without horizontal scrolling at 375 px.
// Screenshots go to test-artifacts/.

const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const t = await buildTestApp({ env: { PUBLIC_BASE_URL: origin, SANDBOX_SPEED: 'max', TENANT_WEBHOOK_RETRY_SCHEDULE: '0' } });
await t.app.listen({ port, host: '127.0.0.1' });
await t.modules.calls.worker.start();
await t.modules.calls.postCall.start();
const webhooks = t.modules.webhooks.worker;

// A receiver that refuses until told to accept.
let accepting = false;
const received: string[] = [];
const receiver = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    received.push(body);
    response.writeHead(accepting ? 204 : 500).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;

const email = uniqueEmail('dash');
const password = 'correct horse battery';
const session = (page: Page) => sessionOf(t, page);

describe('the dashboard in Chromium', async () => {
  const browser = await launchChromium(['--autoplay-policy=no-user-gesture-required']);
  await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  const errors = collectPageErrors(page);
  let agentUrl = '';

  it('signs up, logs out, and logs in again by keyboard alone', async () => {
    await page.goto(`${origin}/`);
    await heading(page, 'Log in');
    await checkPage(page, 'login');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Name').fill('Ada');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading(page, 'Agents');
    await page.getByText('No agents yet.').waitFor();
    await page.getByRole('button', { name: 'Log out' }).click();
    await heading(page, 'Log in');
    // A wrong password is refused in words.
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').waitFor();
    // Keyboard alone: the email field has the focus; Tab to the password, Enter submits.
    await page.reload();
    await heading(page, 'Log in');
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(password);
    await page.keyboard.press('Enter');
    await heading(page, 'Agents');
    assert.equal(new URL(page.url()).pathname, '/agents');
  });

  it('creates an agent, shows its webhook secret once, and saves its settings', async () => {
    await page.getByLabel("New agent's name").fill('Front desk');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await heading(page, 'Front desk');
    agentUrl = page.url();
    const secret = await page.getByTestId('secret-value').textContent();
    assert.match(String(secret), /^whsec_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied', { exact: true }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);

    await page.getByLabel('Prompt').fill('You are the receptionist of Acme.');
    await page.getByLabel('First message').fill('Hello, Acme here. How can I help?');
    await page.getByLabel('End-call phrases').fill('Goodbye\nHave a nice day');
    await page.getByLabel('Maximum call length (seconds)').fill('300');
    await page.getByLabel('Language', { exact: true }).selectOption('en-GB');
    await page.getByLabel('Webhook URL').fill('ftp://example.com/hook');
    await page.getByRole('button', { name: 'Save agent' }).click();
    // The platform's refusal is shown on its field.
    await page.getByText(/http/i, { exact: false }).and(page.locator('.field-error')).waitFor();
    await page.getByLabel('Webhook URL').fill(receiverUrl);
    await page.getByLabel('call.ended').check();
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByText('Saved', { exact: true }).waitFor();

    const { token, workspaceId } = await session(page);
    const id = agentUrl.split('/').at(-1);
    const saved = (await t.request({ method: 'GET', url: `/v1/agents/${id}`, token, workspaceId })).json();
    assert.equal(saved.prompt, 'You are the receptionist of Acme.');
    assert.equal(saved.first_message, 'Hello, Acme here. How can I help?');
    assert.deepEqual(saved.end_call_phrases, ['Goodbye', 'Have a nice day']);
    assert.equal(saved.max_duration_seconds, 300);
    assert.equal(saved.language, 'en-GB');
    assert.equal(saved.webhook_url, receiverUrl);
    assert.deepEqual(saved.webhook_events, ['call.ended']);

    // Shown once: after a reload only the rotation is offered.
    await page.reload();
    await page.getByRole('button', { name: 'Rotate webhook secret' }).waitFor();
    assert.equal(await page.getByTestId('secret-value').count(), 0);
    await checkPage(page, 'agent');
  });

  it('edits the agent by keyboard alone', async () => {
    await page.getByLabel('Name', { exact: true }).focus();
    await page.keyboard.press('End');
    await page.keyboard.type(' (main)');
    let onSave = false;
    for (let i = 0; i < 60 && !onSave; i++) {
      await page.keyboard.press('Tab');
      onSave = (await page.evaluate('document.activeElement?.textContent')) === 'Save agent';
    }
    assert.ok(onSave, 'Tab reaches the Save button');
    await page.keyboard.press('Enter');
    await page.getByText('Saved', { exact: true }).waitFor();
    await heading(page, 'Front desk (main)');
  });

  it('places a sandbox call from the test panel, finds it on the calls page, then its transcript, latency and a recording that plays to the end', async () => {
    const { token, workspaceId } = await session(page);
    const agentId = agentUrl.split('/').at(-1);
    assert.equal(new URL(page.url()).pathname, `/agents/${agentId}`);
    await page.getByLabel('Number to call').fill('+15550100200');
    await page.getByLabel('Caller script').fill('Hi, what are your opening hours?\nThanks, goodbye!');
    await page.getByRole('button', { name: 'Place sandbox call' }).click();
    const panel = page.getByRole('region', { name: 'Sandbox call' });
    // Followed in the panel as it goes.
    await panel.getByRole('cell', { name: 'Hi, what are your opening hours?' }).waitFor({ timeout: 60_000 });
    const callId = String(await panel.getByRole('link', { name: 'Open the call' }).getAttribute('href')).split('/').at(-1) as string;
    const placed = await t.request({ method: 'GET', url: `/v1/calls/${callId}`, token, workspaceId });
    assert.equal(placed.statusCode, 200, placed.body);
    assert.deepEqual([placed.json().agent_id, placed.json().to], [agentId, '+15550100200']);

    await page.getByRole('link', { name: 'Calls' }).click();
    await heading(page, 'Calls');
    const row = page.getByRole('row').filter({ hasText: '+15550100200' });
    await row.waitFor();
    await checkPage(page, 'calls');
    // Filters: a direction with no call shows the empty state, the call's own shows it again.
    await page.getByLabel('Direction').selectOption('inbound');
    await page.getByText('No calls match.').waitFor();
    await page.getByLabel('Direction').selectOption('outbound');
    await page.getByLabel('Agent').selectOption({ label: 'Front desk (main)' });
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const csv = fs.readFileSync(String(await (await download).path()), 'utf8');
    assert.ok(csv.includes(callId), 'the export lists the call');
    await row.getByRole('link').click();

    await heading(page, 'Call');
    assert.equal(new URL(page.url()).pathname, `/calls/${callId}`);
    // The page follows the call until its recording is made.
    const audio = page.getByLabel('Call recording');
    await audio.waitFor({ timeout: 60_000 });
    await page.getByRole('cell', { name: 'Hi, what are your opening hours?' }).waitFor();
    await page.getByRole('cell', { name: 'Hello, Acme here. How can I help?' }).waitFor();
    assert.ok((await page.getByRole('cell', { name: /^\d+ ms$/ }).count()) >= 1, 'per-turn latency');
    // Each turn's time from the call's start, as the API has it.
    const turns = (await t.request({ method: 'GET', url: `/v1/calls/${callId}`, token, workspaceId })).json().transcript as Array<{ text: string; start_ms: number }>;
    const asked = turns.find((turn) => turn.text === 'Hi, what are your opening hours?');
    assert.ok(asked && asked.start_ms > 0, 'the caller spoke after the start');
    await page.getByRole('row').filter({ hasText: 'Hi, what are your opening hours?' }).getByRole('cell', { name: clock(asked.start_ms), exact: true }).waitFor();
    assert.match(String(await page.locator('[data-field="Status"]').textContent()), /completed/);
    assert.match(String(await page.locator('[data-field="Cost"]').textContent()), /^\$\d/);
    const ended = await playToEnd(page);
    assert.ok(ended > 1, `the recording lasts ${ended} s`);
    await checkPage(page, 'call');
  });

  it('says when the recording is not ready yet (409) and tries again on request', async () => {
    await browser.route('**/recording.mp3?*', (route) =>
      route.fulfill({ status: 409, contentType: 'application/problem+json', headers: { 'retry-after': '1' }, body: JSON.stringify({ code: 'recording_not_ready', status: 409 }) }),
    );
    await page.reload();
    await page.getByText('The recording is not ready yet.').waitFor();
    await browser.unrouteAll();
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByLabel('Call recording').waitFor();
    // Polled with evaluate, not waitForFunction: its polling evaluates a string in the page, which
    // the dashboard's CSP (no unsafe-eval) refuses once the first check does not already hold.
    const deadline = Date.now() + 30_000;
    let duration = Number(await page.evaluate("document.querySelector('audio')?.duration || 0"));
    while (!(duration > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      duration = Number(await page.evaluate("document.querySelector('audio')?.duration || 0"));
    }
    assert.ok(duration > 1, `the recording lasts ${duration} s`);
  });

  it('creates an API key shown once, and revokes it: the platform then refuses it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await heading(page, 'API keys');
    await page.getByText('No API keys yet.').waitFor();
    await page.getByLabel('Key name').fill('Backend');
    await page.getByLabel('Scope').selectOption('read-only');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = String(await page.getByTestId('secret-value').textContent());
    assert.match(key, /^sk_/);
    assert.equal((await t.request({ method: 'GET', url: '/v1/agents', token: key })).statusCode, 200);
    assert.equal((await t.request({ method: 'POST', url: '/v1/agents', token: key, payload: { name: 'x' } })).statusCode, 403);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    assert.equal(await page.getByTestId('secret-value').count(), 0);
    await page.getByRole('row').filter({ hasText: 'Backend' }).getByText('read-only').waitFor();
    await checkPage(page, 'api-keys');

    await page.getByRole('button', { name: 'Revoke Backend' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Revoke “Backend”?' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Revoke Backend' }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('row').filter({ hasText: 'Backend' }).getByText(/^Revoked/).waitFor();
    assert.equal((await t.request({ method: 'GET', url: '/v1/agents', token: key })).statusCode, 401);
  });

  it('finds a failed webhook under Failed and replays it: delivered', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await heading(page, 'Webhooks');
    await page.getByLabel('Endpoint URL').fill(receiverUrl);
    await page.getByRole('button', { name: 'Save endpoint' }).click();
    assert.match(String(await page.getByTestId('secret-value').textContent()), /^whsec_/);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('Test event queued').waitFor();
    while ((await webhooks.runDueOnce()) > 0);
    assert.ok(received.some((body) => body.includes('webhook.test')), 'the receiver was called (and answered 500)');

    await page.getByRole('tab', { name: 'Failed' }).click();
    const failedRow = page.getByRole('row').filter({ hasText: 'webhook.test' });
    await failedRow.waitFor();
    await checkPage(page, 'webhooks-failed');
    accepting = true;
    await failedRow.getByRole('button', { name: /^Replay webhook\.test/ }).click();
    await page.getByText('Replay queued').waitFor();
    while ((await webhooks.runDueOnce()) > 0);
    await page.getByText('No failed deliveries.').waitFor();
    await page.getByRole('tab', { name: 'Deliveries' }).click();
    await page.getByRole('row').filter({ hasText: 'webhook.test' }).getByText('succeeded').first().waitFor();

    // A new secret, shown once; then two more failures replayed at once.
    const first = await page.getByTestId('secret-value').textContent();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByTestId('secret-value').filter({ hasNotText: String(first) }).waitFor();
    accepting = false;
    // Both test events queued (their requests answered) before the worker runs: the page's
    // "Test event queued" is still shown from the first send, so it cannot tell.
    let answered = 0;
    const bothQueued = page.waitForResponse((res) => res.request().method() === 'POST' && new URL(res.url()).pathname === '/v1/webhooks/test' && ++answered === 2);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await bothQueued;
    while ((await webhooks.runDueOnce()) > 0);
    await page.getByRole('tab', { name: 'Failed' }).click();
    await page.getByRole('button', { name: 'Replay all' }).click();
    await page.getByText('2 deliveries queued again').waitFor();
  });

  it('tops up the wallet in sandbox mode and shows it in the ledger', async () => {
    await page.getByRole('link', { name: 'Billing' }).click();
    await heading(page, 'Billing');
    const before = String(await page.getByTestId('balance').textContent());
    await page.getByLabel('Amount (USD)').fill('25');
    await page.getByRole('button', { name: 'Top up' }).click();
    await page.getByText(/Payment succeeded/).waitFor();
    await page.getByRole('row').filter({ hasText: /top ?up/i }).filter({ hasText: '$25.00' }).first().waitFor();
    const after = String(await page.getByTestId('balance').textContent());
    assert.equal(Number(after.replace(/[$,]/g, '')) - Number(before.replace(/[$,]/g, '')), 25);
    await checkPage(page, 'billing');
  });

  it('switches workspaces: each shows its own agents', async () => {
    const { token } = await session(page);
    const created = await t.request({ method: 'POST', url: '/v1/workspaces', token, payload: { name: 'Second shop' } });
    assert.equal(created.statusCode, 201, created.body);
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.reload();
    await page.getByRole('link', { name: 'Front desk (main)' }).waitFor();
    await page.getByLabel('Workspace').selectOption({ label: 'Second shop' });
    await page.getByText('No agents yet.').waitFor();
    await page.getByLabel('Workspace').selectOption({ label: "Ada's workspace" });
    await page.getByRole('link', { name: 'Front desk (main)' }).waitFor();
  });

  it('resets a forgotten password from the mailed link, and confirms the email address', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await heading(page, 'Log in');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await heading(page, 'Reset your password');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByText(/a link to reset its password is on its way/).waitFor();
    const linkIn = (subject: RegExp) => {
      const mail = sentMails(t).filter((m) => m.to === email && subject.test(m.subject)).at(-1);
      const link = mail?.text.match(/https?:\/\/\S+/)?.[0];
      assert.ok(link, `a mail about ${subject}`);
      return new URL(link);
    };
    const reset = linkIn(/password/i);
    assert.equal(reset.pathname, '/reset-password');
    await page.goto(`${origin}${reset.pathname}${reset.search}`);
    await page.getByLabel('New password', { exact: true }).waitFor();
    await checkPage(page, 'reset-password');
    await page.getByLabel('New password', { exact: true }).fill('a brand new secret');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText(/Your password is changed/).waitFor();
    // A spent link is refused in words.
    await page.reload();
    await page.getByLabel('New password', { exact: true }).fill('another new secret');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('alert').waitFor();

    // A deep link while signed out opens after the login.
    await page.goto(`${agentUrl}`);
    await heading(page, 'Log in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a brand new secret');
    await page.getByRole('button', { name: 'Log in' }).click();
    await heading(page, 'Front desk (main)');

    const verify = linkIn(/confirm|verify/i);
    await page.goto(`${origin}${verify.pathname}${verify.search}`);
    await page.getByRole('button', { name: 'Confirm my email' }).click();
    await page.getByText(`${email} is confirmed.`).waitFor();
    await checkPage(page, 'email-verified');
  });

  it('refreshes an expired access token once for every tab: both tabs load, the session lives on', async () => {
    const stored = JSON.parse(String(await page.evaluate("localStorage.getItem('vap.tokens')"))) as { accessToken: string; refreshToken: string; expiresAt: number };
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ ...decodeJwt(stored.accessToken), iat: now - 3600, exp: now - 60 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(t.jwtSecret));
    assert.equal((await t.request({ method: 'GET', url: '/v1/auth/me', token: expired })).json().code, 'token_expired');
    await page.evaluate(`localStorage.setItem('vap.tokens', ${JSON.stringify(JSON.stringify({ ...stored, accessToken: expired }))})`);
    const other = await browser.newPage();
    other.on('pageerror', (error) => errors.push(error.message));
    // Each refresh is held until a second one comes (or 1.5 s pass), so unguarded tabs would race.
    const held: Array<() => void> = [];
    const sent: string[] = [];
    await browser.route('**/v1/auth/refresh', async (route) => {
      sent.push(route.request().frame().page() === page ? 'first tab' : 'second tab');
      await new Promise<void>((resolve) => {
        held.push(resolve);
        if (held.length >= 2) for (const release of held) release();
        else setTimeout(resolve, 1500);
      });
      await route.continue();
    });
    // Both tabs start with the expired token and the same refresh token.
    await Promise.all([page.goto(`${origin}/api-keys`), other.goto(`${origin}/api-keys`)]);
    for (const [i, tab] of [page, other].entries()) {
      await tab
        .getByRole('row')
        .filter({ hasText: 'Backend' })
        .waitFor()
        .catch(async (error) => {
          await tab.screenshot({ path: artifact(`dashboard-refresh-tab${i}-failed.png`) });
          throw new Error(`tab ${i} at ${tab.url()} (refreshes from: ${sent.join(', ')}): ${error}`);
        });
    }
    await browser.unrouteAll();
    assert.equal(sent.length, 1, `one refresh for both tabs (from: ${sent.join(', ')})`);
    const fresh = JSON.parse(String(await page.evaluate("localStorage.getItem('vap.tokens')"))) as { accessToken: string; refreshToken: string };
    assert.notEqual(fresh.refreshToken, stored.refreshToken);
    assert.equal((await t.request({ method: 'GET', url: '/v1/auth/me', token: fresh.accessToken })).statusCode, 200, 'the session was not revoked as a reuse');
    await other.close();
  });

  it('ends the session on a token the platform refuses: back to the login page', async () => {
    await page.evaluate(`localStorage.setItem('vap.tokens', JSON.stringify({ accessToken: 'not-a-token', refreshToken: 'rt_not_a_token', expiresAt: 0 }))`);
    await page.goto(`${origin}/calls`);
    await heading(page, 'Log in');
    assert.equal(await page.evaluate("localStorage.getItem('vap.tokens')"), null);
  });

  it('logged no error in the page', () => assert.deepEqual(errors, []));
});
