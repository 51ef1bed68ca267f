import assert from 'node:assert/strict';
import http from 'node:http';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startFakeStripe } from '../fakes/stripe/index.ts';
import { launchChromium } from '../../src/modules/widgets/browser-helpers.ts';
import { usd } from '../../web/dashboard/src/ui/format.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { signUp, type TestUser } from '../support/fixtures.ts';
import { freePort } from '../support/ports.ts';
import { checkPage, heading } from './browser.ts';

// The billing and webhooks pages in Debian's Chromium against the real platform on 127.0.0.1:
// a sandbox app (top-ups with the test cards, the threshold and auto-recharge, usage by day from a
// real sandbox call, the ledger's pages, a delivery's attempts, the endpoint's events) and a Stripe
// app on the local fake Stripe, whose fake Stripe.js the page loads (STRIPE_JS_URL): pending → card
// confirmed in the browser → Stripe's signed webhook → balance up. Each action's effect is read
// back through the API.

const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const t = await buildTestApp({ env: { PUBLIC_BASE_URL: origin, SANDBOX_SPEED: 'max', TENANT_WEBHOOK_RETRY_SCHEDULE: '0,0' } });
await t.app.listen({ port, host: '127.0.0.1' });
await t.modules.calls.worker.start();
const webhooks = t.modules.webhooks.worker;

const STRIPE = { secretKey: 'sk_test_dashboard_0123456789', webhookSecret: 'whsec_dashboard_0123456789', publishableKey: 'pk_test_dashboard_0123456789' };
const stripePort = await freePort();
const stripeOrigin = `http://127.0.0.1:${stripePort}`;
const fakeStripe = await startFakeStripe({ ...STRIPE, webhookUrl: `${stripeOrigin}/v1/payments/webhook` });
after(() => fakeStripe.close());
const onStripe = await buildTestApp({
  env: {
    PUBLIC_BASE_URL: stripeOrigin,
    PAYMENTS_PROVIDER: 'stripe',
    STRIPE_SECRET_KEY: STRIPE.secretKey,
    STRIPE_WEBHOOK_SECRET: STRIPE.webhookSecret,
    STRIPE_PUBLISHABLE_KEY: STRIPE.publishableKey,
    STRIPE_API_BASE_URL: fakeStripe.baseUrl,
    STRIPE_JS_URL: `${fakeStripe.baseUrl}/v3/`,
  },
});
await onStripe.app.listen({ port: stripePort, host: '127.0.0.1' });

// A webhook receiver that refuses once (500), then accepts.
const answers = [500];
const receiver = http.createServer((request, response) => {
  request.resume();
  request.on('end', () => response.writeHead(answers.shift() ?? 204).end());
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;

const api = (app: TestApp, user: TestUser) => async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
  const res = await app.request({ method, url, token: user.accessToken, workspaceId: user.workspaceId, ...(payload ? { payload } : {}) });
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
};

async function logIn(page: Page, at: string, user: TestUser) {
  await page.goto(`${at}/login`);
  await heading(page, 'Log in');
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await heading(page, 'Agents');
}

const amountOf = async (page: Page) => Number(String(await page.getByTestId('balance').textContent()).replace(/[$,]/g, ''));

describe('the billing and webhooks pages in Chromium', async () => {
  const browser = await launchChromium();
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  const watch = (tab: Page) => {
    tab.on('pageerror', (error) => errors.push(error.message));
    tab.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) errors.push(message.text());
    });
  };
  watch(page);
  const user = await signUp(t);
  const call = api(t, user);

  it('shows a new workspace: loading, then the balance, the prices, nothing spent yet, the signup credit; and an error it can retry', async () => {
    await logIn(page, origin, user);
    // The usage request held back: its loading state; then refused: its error state, retried.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reached = () => {};
    const arrived = new Promise<void>((resolve) => {
      reached = resolve;
    });
    await browser.route('**/v1/usage*', async (route) => {
      reached();
      await held;
      await route.fulfill({ status: 500, contentType: 'application/problem+json', body: JSON.stringify({ status: 500, code: 'internal', detail: 'Something broke.' }) });
    });
    await page.getByRole('link', { name: 'Billing' }).click();
    await heading(page, 'Billing');
    await page.getByRole('region', { name: 'Usage, last 30 days' }).getByRole('status').filter({ hasText: 'Loading' }).waitFor();
    await checkPage(page, 'billing-loading');
    await arrived;
    release();
    const usageError = page.getByRole('region', { name: 'Usage, last 30 days' }).getByRole('alert');
    await usageError.getByText('Something broke.').waitFor();
    await checkPage(page, 'billing-error');
    await browser.unrouteAll();
    await usageError.getByRole('button', { name: 'Try again' }).click();
    await page.getByText('Nothing spent in the last 30 days.').waitFor();

    assert.equal(await amountOf(page), (await call('GET', '/v1/wallet')).balance_usd);
    const pricing = await call('GET', '/v1/pricing');
    assert.match(String(await page.getByTestId('pricing').textContent()), new RegExp(`\\$${pricing.rates.call_per_min_usd.toFixed(2)} per minute`));
    const [credit] = (await call('GET', '/v1/wallet/transactions')).data;
    await page.getByRole('row').filter({ hasText: 'adjustment' }).filter({ hasText: `$${credit.amount_usd.toFixed(2)}` }).waitFor();
    await checkPage(page, 'billing-new');
  });

  it('tops up with the sandbox test card; refuses an amount out of bounds before sending it; says why a declined card failed', async () => {
    const before = await amountOf(page);
    await page.getByLabel('Amount (USD)').fill('2');
    await page.getByRole('button', { name: 'Top up' }).click();
    await page.getByText('Enter an amount from $5 to $10,000.').waitFor();
    assert.equal((await call('GET', '/v1/payments/history')).data.length, 0, 'nothing was sent');

    // By keyboard: the amount typed, Enter submits.
    await page.getByLabel('Amount (USD)').fill('');
    await page.getByLabel('Amount (USD)').focus();
    await page.keyboard.type('25');
    await page.keyboard.press('Enter');
    await page.getByText('Payment succeeded: $25.00').waitFor();
    await page.getByTestId('balance').filter({ hasText: usd(before + 25) }).waitFor();
    assert.equal((await call('GET', '/v1/wallet')).balance_usd, before + 25);

    await page.getByLabel('Test card').selectOption('pm_card_declined');
    await page.getByRole('button', { name: 'Top up' }).click();
    await page.getByRole('alert').filter({ hasText: /declined/ }).waitFor();
    await checkPage(page, 'billing-declined');
    const [declined, succeeded] = (await call('GET', '/v1/payments/history')).data;
    assert.deepEqual([declined.status, declined.payment_method, succeeded.status], ['failed', 'pm_card_declined', 'succeeded']);
    assert.equal((await call('GET', '/v1/wallet')).balance_usd, before + 25, 'the declined card credited nothing');
  });

  it('saves the low-balance threshold and auto-recharge, which then tops up below the threshold', async () => {
    const settings = page.getByRole('form', { name: 'Balance alerts and auto-recharge' });
    await settings.getByLabel('Low-balance threshold (USD)').fill('50');
    await settings.getByLabel(/Top up automatically/).check();
    await settings.getByLabel('Each recharge adds (USD)').fill('30');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await settings.getByText('Auto-recharge needs the saved payment method it charges.').waitFor();
    assert.equal((await call('GET', '/v1/wallet')).auto_recharge.enabled, false, 'refused before sending');

    await settings.getByLabel('Saved payment method').fill('pm_card_visa');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await settings.getByText('Settings saved').waitFor();
    const wallet = await call('GET', '/v1/wallet');
    assert.deepEqual([wallet.threshold_usd, wallet.auto_recharge], [50, { enabled: true, amount_usd: 30, payment_method: 'pm_card_visa' }]);
    await page.getByTestId('balance-note').getByText(/Below your low-balance threshold of \$50\.00\. Auto-recharge adds \$30\.00/).waitFor();
    await checkPage(page, 'billing-settings');

    assert.ok((await t.modules.payments.worker.runDueOnce()) >= 1);
    await page.reload();
    await page.getByRole('row').filter({ hasText: 'auto-recharge' }).filter({ hasText: '$30.00' }).waitFor();
    assert.equal(await amountOf(page), wallet.balance_usd + 30);
    assert.equal((await call('GET', '/v1/wallet')).balance_usd, wallet.balance_usd + 30);
  });

  it('pages through the ledger, older and back, as the API lists it', async () => {
    for (let i = 0; i < 20; i++) await call('POST', '/v1/payments/topup', { amount_usd: 5 });
    const all = (await call('GET', '/v1/wallet/transactions?limit=100')).data as Array<{ id: string; type: string }>;
    assert.ok(all.length > 20);
    await page.reload();
    const ledger = page.getByRole('region', { name: 'Ledger' });
    const rows = ledger.locator('tbody tr');
    await ledger.getByText('Page 1').waitFor();
    await rows.nth(19).waitFor();
    assert.equal(await rows.count(), 20);
    assert.equal(await ledger.getByRole('button', { name: 'Newer' }).isDisabled(), true);
    const signupCredit = ledger.getByRole('cell', { name: 'adjustment', exact: true });
    assert.equal(await signupCredit.count(), 0, 'the signup credit is the oldest row: not on page 1');
    await ledger.getByRole('button', { name: 'Older' }).click();
    await ledger.getByText('Page 2').waitFor();
    await signupCredit.waitFor();
    assert.equal(await rows.count(), all.length - 20);
    await checkPage(page, 'billing-ledger-page-2');
    await ledger.getByRole('button', { name: 'Newer' }).click();
    await ledger.getByText('Page 1').waitFor();
    await signupCredit.waitFor({ state: 'detached' });
  });

  it('draws what a real sandbox call cost on its day, described in words and as a table', async () => {
    const agent = await call('POST', '/v1/agents', { name: 'Billing desk', first_message: 'Hello.' });
    const placed = await call('POST', '/v1/calls/outbound', { agent_id: agent.id, to: '+15550100300', simulation: { caller_script: ['Thanks, goodbye!'] } });
    const deadline = Date.now() + 30_000;
    let cost = 0;
    while (!(cost > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      cost = (await call('GET', `/v1/calls/${placed.id}`)).cost_usd;
    }
    assert.ok(cost > 0, 'the call was billed');
    const usage = await call('GET', '/v1/usage');
    // The call's UTC day, not the clock's (a run crossing midnight bills it on yesterday's bar).
    const callDay = String(placed.created_at).slice(0, 10);
    const billed = usage.by_day.find((day: { date: string }) => day.date === callDay);
    assert.ok(billed?.amount_usd > 0, JSON.stringify(usage.by_day.slice(-2)));

    await page.reload();
    const panel = page.getByRole('region', { name: 'Usage, last 30 days' });
    await panel.getByRole('img', { name: 'Spending per day' }).waitFor();
    const summary = String(await panel.getByTestId('usage-summary').textContent());
    assert.ok(summary.startsWith(`${usd(usage.total_usd)} spent`), summary);
    assert.equal(await panel.locator('rect.usage-bar').count(), usage.by_day.length);
    const drawn = await panel.locator('rect.usage-bar').nth(usage.by_day.indexOf(billed)).getAttribute('height');
    assert.ok(Number(drawn) > 0, "the call's day has its bar drawn");
    await panel.getByText('Spending per day as a table').click();
    const row = panel.getByRole('row').filter({ hasText: billed.date });
    await row.waitFor();
    assert.equal(await row.getByRole('cell').nth(1).textContent(), usd(billed.amount_usd));
    await checkPage(page, 'billing-usage');
  });

  it("shows each webhook delivery's attempts: time, trigger, outcome, response code, duration and error", async () => {
    await call('PUT', '/v1/webhooks', { webhook_url: receiverUrl });
    await call('POST', '/v1/webhooks/test', {});
    while ((await webhooks.runDueOnce()) > 0);
    await call('PUT', '/v1/webhooks', { webhook_url: `http://127.0.0.1:${await freePort()}/closed` });
    await call('POST', '/v1/webhooks/test', {});
    while ((await webhooks.runDueOnce()) > 0);
    const [unreachable, delivered] = (await call('GET', '/v1/webhooks/deliveries?event_type=webhook.test')).data as Array<{ id: string }>;
    const detail = await call('GET', `/v1/webhooks/deliveries/${delivered.id}`);
    assert.deepEqual(
      detail.attempts.map((a: { status_code: number }) => a.status_code),
      [500, 204],
    );

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await heading(page, 'Webhooks');
    const toggle = page.getByRole('button', { name: `Attempts of webhook.test ${delivered.id}` });
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    await toggle.click();
    const attempts = page.getByTestId(`attempts-${delivered.id}`);
    await attempts.waitFor();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    const [first, second] = await attempts.locator('tbody tr').all();
    assert.match(String(await first.textContent()), /^1.*scheduled.*refused.*500.*\d+ ms/);
    assert.match(String(await second.textContent()), /^2.*scheduled.*succeeded.*204.*\d+ ms/);

    await page.getByRole('button', { name: `Attempts of webhook.test ${unreachable.id}` }).click();
    const failed = page.getByTestId(`attempts-${unreachable.id}`);
    const errorText = (await call('GET', `/v1/webhooks/deliveries/${unreachable.id}`)).attempts[0].error as string;
    assert.ok(errorText, 'the platform recorded the connection error');
    await failed.getByRole('row').filter({ hasText: 'no answer' }).filter({ hasText: errorText }).first().waitFor();
    await checkPage(page, 'webhooks-attempts');
    await toggle.click();
    await attempts.waitFor({ state: 'detached' });
  });

  it("chooses the endpoint's events: none refused before sending, the choice saved and shown again", async () => {
    // The endpoint saved through the API above has the platform's default events.
    const endpoint = page.getByRole('form', { name: 'Workspace endpoint' });
    const box = (event: string) => endpoint.getByRole('checkbox', { name: event, exact: true });
    const defaults = (await call('GET', '/v1/webhooks')).events as string[];
    assert.ok(defaults.length > 0);
    for (const event of defaults) assert.equal(await box(event).isChecked(), true, `${event} checked as saved`);
    assert.equal(await box('call.completed').isChecked(), false);
    for (const event of defaults) await box(event).uncheck();
    await endpoint.getByRole('button', { name: 'Save endpoint' }).click();
    await endpoint.getByText('Choose at least one event.').waitFor();
    assert.deepEqual((await call('GET', '/v1/webhooks')).events, defaults, 'nothing was sent');

    await box('call.completed').check();
    await box('wallet.low_balance').check();
    await endpoint.getByRole('button', { name: 'Save endpoint' }).click();
    await endpoint.getByText('Endpoint saved').waitFor();
    assert.deepEqual([...(await call('GET', '/v1/webhooks')).events].sort(), ['call.completed', 'wallet.low_balance']);
    await page.reload();
    await heading(page, 'Webhooks');
    await box('call.completed').waitFor();
    const checked: string[] = [];
    for (const event of [...defaults, 'call.completed']) if (await box(event).isChecked()) checked.push(event);
    assert.deepEqual(checked.sort(), ['call.completed', 'wallet.low_balance'], 'shown as saved after a reload');
    await checkPage(page, 'webhooks-events');
  });

  it("in Stripe mode: pending with a client secret, the card confirmed with Stripe.js in the page, Stripe's webhook, balance up", async () => {
    const payer = await signUp(onStripe);
    const stripeApi = api(onStripe, payer);
    const tab = await browser.newPage();
    tab.setDefaultTimeout(15_000);
    watch(tab);
    await logIn(tab, stripeOrigin, payer);
    await tab.getByRole('link', { name: 'Billing' }).click();
    await heading(tab, 'Billing');
    assert.equal(await tab.getByLabel('Test card').count(), 0, 'no sandbox test cards');
    await tab.getByLabel('Amount (USD)').fill('30');
    await tab.getByRole('button', { name: 'Top up' }).click();
    await tab.getByRole('heading', { name: 'Pay $30.00 by card' }).waitFor();
    const [pending] = (await stripeApi('GET', '/v1/payments/history')).data;
    assert.deepEqual([pending.status, pending.provider, pending.client_secret], ['pending', 'stripe', null]);
    const intent = fakeStripe.paymentIntents().find((pi) => pi.metadata.payment_id === pending.id);
    assert.equal(intent?.status, 'requires_payment_method');

    // Stripe.js (the fake, from STRIPE_JS_URL: allowed by the CSP) mounts its card field.
    await tab.getByLabel('Card number').fill('4000 0000 0000 0002');
    await tab.getByRole('button', { name: 'Pay $30.00' }).click();
    await tab.getByRole('alert').filter({ hasText: 'Your card was declined.' }).waitFor();
    await checkPage(tab, 'billing-stripe-checkout');
    // Stripe's payment_failed event reached the platform, which keeps the payment open.
    assert.deepEqual((await fakeStripe.delivered()).map((d) => JSON.parse(d.body).result), ['ignored', 'ignored']);
    assert.equal((await stripeApi('GET', `/v1/payments/${pending.id}`)).status, 'pending', 'another card may still pay it');

    await tab.getByLabel('Card number').fill('4242 4242 4242 4242');
    await tab.getByRole('button', { name: 'Pay $30.00' }).click();
    await tab.getByText('Payment succeeded: $30.00').waitFor();
    await tab.getByTestId('balance').filter({ hasText: '$40.00' }).waitFor();
    await tab.getByRole('row').filter({ hasText: /top.?up/ }).filter({ hasText: '$30.00' }).waitFor();
    assert.equal(fakeStripe.paymentIntents().find((pi) => pi.id === intent?.id)?.status, 'succeeded');
    const results = (await fakeStripe.delivered()).map((d) => JSON.parse(d.body).result);
    assert.ok(results.includes('applied'), `the webhook credited it (${results.join(', ')})`);
    assert.equal((await stripeApi('GET', '/v1/wallet')).balance_usd, 40);
    assert.equal((await stripeApi('GET', `/v1/payments/${pending.id}`)).status, 'succeeded');
    await checkPage(tab, 'billing-stripe-paid');
    await tab.close();
  });

  it('logged no error in the pages (CSP violations included)', () => {
    assert.deepEqual(errors, []);
  });
});
