import assert from 'node:assert/strict';
import http from 'node:http';
import { after, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { launchChromium } from '../../src/modules/widgets/browser-helpers.ts';
import { buildTestApp } from '../support/app.ts';
import { signUp } from '../support/fixtures.ts';
import { freePort } from '../support/ports.ts';
import { checkPage, heading, collectPageErrors } from './browser.ts';

// The agent editor, its test panel, the call page and the calls list in Debian's Chromium against
// the real platform on 127.0.0.1. One signed-in tab walks them in order: every agent field edited
// and read back through the API (a function's JSON Schema error shown, then fixed; the platform's
// own refusal shown on its field), the voice preview played, a function tested against a local
// server, a chat, a sandbox call from the panel with its extracted field and webhook events, a slow
// live call followed then hung up and another transferred from their page, and 51+ calls paged.

const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const t = await buildTestApp({ env: { PUBLIC_BASE_URL: origin, SANDBOX_SPEED: '20' } });
await t.app.listen({ port, host: '127.0.0.1' });
await t.modules.calls.worker.start();
await t.modules.calls.postCall.start();
const webhooks = t.modules.webhooks.worker;

// One local server for the agent's webhook (/hooks) and its function (/orders).
const hooks: Array<Record<string, unknown>> = [];
const functionCalls: Array<Record<string, unknown>> = [];
const receiver = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    if (request.url === '/orders') {
      const sent = JSON.parse(body) as { arguments: { order_id?: string } };
      functionCalls.push(sent);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'shipped', order_id: sent.arguments.order_id }));
      return;
    }
    hooks.push(JSON.parse(body));
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
const receiverOrigin = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;

const user = await signUp(t, { name: 'Grace' });
const api = async (method: 'GET' | 'POST', url: string, payload?: object) => {
  const res = await t.request({ method, url, token: user.accessToken, workspaceId: user.workspaceId, ...(payload ? { payload } : {}) });
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
};
const agent = await api('POST', '/v1/agents', { name: 'Support line' });
const knowledgeBase = await api('POST', '/v1/knowledge-base', { name: 'Pricing FAQ' });
const voices = (await api('GET', '/v1/voices')).data as Array<{ id: string }>;
const otherVoice = voices.find((v) => v.id !== agent.voice)?.id as string;
const readAgent = () => api('GET', `/v1/agents/${agent.id}`);

/** Polls `read` (in the test, not the page: the dashboard's CSP refuses waitForFunction's eval) until `done`. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!done(value)) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    value = await read();
  }
  return value;
}

/** A slow sandbox call (each agent turn waits minutes of virtual time): live for long enough. */
const slowCall = () =>
  api('POST', '/v1/calls/outbound', { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['Hello there', 'Tell me more'], latency: { llm_first_token_ms: 60_000, tts_first_audio_ms: 60_000 } } });

/** Every field the editor test set, as the API reads it back. */
// biome-ignore lint/suspicious/noExplicitAny: the API's JSON as read back
function expectEveryField(saved: any) {
  assert.equal(saved.name, 'Support line (EU)');
  assert.equal(saved.prompt, 'You answer questions about Acme orders.');
  assert.equal(saved.first_message, 'Hello, Acme support.');
  assert.equal(saved.voice, otherVoice);
  assert.equal(saved.language, 'en-GB');
  assert.deepEqual(saved.llm, { provider: 'builtin', model: agent.llm.model, temperature: 0.4 });
  assert.deepEqual(saved.end_call_phrases, ['Goodbye', 'Bye now']);
  assert.equal(saved.max_duration_seconds, 900);
  assert.equal(saved.silence_timeout_seconds, 15);
  assert.equal(saved.turn_end_silence_ms, 600);
  assert.equal(saved.barge_in_min_ms, 300);
  assert.equal(saved.interruptible, false);
  assert.equal(saved.transfer_number, '+15550100300');
  assert.deepEqual(saved.voicemail, { action: 'leave_message', message: 'Please call us back.' });
  assert.deepEqual(saved.knowledge_base_ids, [knowledgeBase.id]);
  assert.deepEqual(saved.functions, [
    { name: 'lookup_order', description: 'Find an order by its id', url: `${receiverOrigin}/orders`, method: 'POST', parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] }, timeout_ms: 4000 },
  ]);
  assert.deepEqual(saved.extraction_fields, [{ name: 'plan', type: 'enum', description: 'The plan the caller chose', enum: ['basic', 'pro'] }]);
  assert.equal(saved.webhook_url, `${receiverOrigin}/hooks`);
  assert.deepEqual(saved.webhook_events, []);
  assert.deepEqual(saved.metadata, { team: 'support' });
}

describe('the agent editor, its test panel and the calls pages in Chromium', async () => {
  const browser = await launchChromium(['--autoplay-policy=no-user-gesture-required']);
  const page: Page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  const errors = collectPageErrors(page);
  await page.goto(`${origin}/login`);
  await page.evaluate(`localStorage.setItem('vap.tokens', ${JSON.stringify(JSON.stringify({ accessToken: user.accessToken, refreshToken: user.refreshToken, expiresAt: Date.now() + 3_600_000 }))})`);

  it('shows an unknown agent as an error', async () => {
    await page.goto(`${origin}/agents/agent_00000000000000000000000000`);
    await page.getByRole('alert').filter({ hasText: 'Could not load this.' }).waitFor();
    await checkPage(page, 'agent-editor-error');
  });

  it('edits every field of an agent (a schema error shown then fixed, a refusal on its field): the API has them', async () => {
    await page.goto(`${origin}/agents/${agent.id}`);
    await heading(page, 'Support line');
    await page.getByText('No functions: the agent calls no outside service.').waitFor();
    await checkPage(page, 'agent-editor-empty');
    await page.getByLabel('Name', { exact: true }).fill('Support line (EU)');
    await page.getByLabel('Prompt').fill('You answer questions about Acme orders.');
    await page.getByLabel('First message').fill('Hello, Acme support.');
    await page.getByLabel('Voice', { exact: true }).selectOption(otherVoice);
    await page.getByLabel('Language', { exact: true }).selectOption('en-GB');
    await page.getByLabel('Temperature').fill('0.4');
    await page.getByLabel('End-call phrases').fill('Goodbye\nBye now');
    await page.getByLabel('Maximum call length (seconds)').fill('900');
    await page.getByLabel('Silence before hanging up (seconds)').fill('15');
    await page.getByLabel('End of turn after silence (ms)').fill('600');
    await page.getByLabel('Barge-in after caller speech (ms)').fill('300');
    await page.getByLabel('The caller may interrupt the agent').uncheck();
    await page.getByLabel('Transfer number').fill('+1 555 010 0300');
    await page.getByLabel('On reaching voicemail').selectOption('leave_message');
    await page.getByLabel('Voicemail message').fill('Please call us back.');
    await page.getByLabel(/^Pricing FAQ/).check();
    await page.getByLabel('Webhook URL').fill(`${receiverOrigin}/hooks`);
    await page.getByLabel('Metadata (JSON)').fill('{"team": "support"');
    await page.locator('.field-error').filter({ hasText: /^Not valid JSON/ }).waitFor();
    await page.getByLabel('Metadata (JSON)').fill('{"team": "support"}');

    // A function whose schema is not JSON yet: the error shows as it is typed, and blocks the save.
    await page.getByRole('button', { name: 'Add function' }).click();
    const fn = page.getByRole('group', { name: /^Function 1/ });
    await fn.getByLabel('Function name').fill('lookup_order');
    await fn.getByLabel('Function description').fill('Find an order by its id');
    await fn.getByLabel('Function URL').fill(`${receiverOrigin}/orders`);
    await fn.getByLabel('Timeout (ms)').fill('4000');
    const schema = fn.getByLabel('Parameters (JSON Schema)');
    await schema.fill('{"type": "object", "properties": {"order_id": {"type": "string"}');
    const schemaError = fn.locator('.field-error').filter({ hasText: /^Not valid JSON/ });
    await schemaError.waitFor();
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByRole('alert').filter({ hasText: 'Fix the field marked above, then save.' }).waitFor();
    assert.deepEqual((await readAgent()).functions, [], 'nothing was saved');
    await schema.fill('{"type": "object", "properties": {"order_id": {"type": "strin"}}}');
    await fn.locator('.field-error').filter({ hasText: '"strin" is not a JSON Schema type' }).waitFor();
    await schema.fill('{"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}');
    await schemaError.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Add extraction field' }).click();
    const field = page.getByRole('group', { name: /^Field 1/ });
    await field.getByLabel('Field name').fill('plan');
    await field.getByLabel('Field type').selectOption('enum');
    await field.getByLabel('What to extract').fill('The plan the caller chose');
    await field.getByLabel('Values').fill('basic, pro');

    // The platform's own refusal lands on its field: no OpenAI-compatible model is configured.
    await page.getByLabel('LLM provider').selectOption('openai');
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.locator('.field-error').filter({ hasText: 'LLM_BASE_URL' }).waitFor();
    await page.getByLabel('LLM provider').selectOption('builtin');
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByText('Saved', { exact: true }).waitFor();
    await heading(page, 'Support line (EU)');

    expectEveryField(await readAgent());
    assert.equal(await page.getByLabel('Transfer number').inputValue(), '+15550100300', 'shown as saved (E.164)');
  });

  it('detaches the knowledge base, narrows the events again, and sends a test event', async () => {
    await page.getByLabel(/^Pricing FAQ/).uncheck();
    await page.getByLabel('call.completed').check();
    await page.getByRole('button', { name: 'Save agent' }).click();
    await until(readAgent, (a) => a.knowledge_base_ids.length === 0, 'the knowledge base detached');
    assert.deepEqual((await readAgent()).webhook_events, ['call.completed']);
    await page.getByLabel('call.completed').uncheck();
    await page.getByRole('button', { name: 'Save agent' }).click();
    await until(readAgent, (a) => a.webhook_events.length === 0, 'every event again');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/^Test event queued \(evt_/).waitFor();
    const tested = async () => {
      while ((await webhooks.runDueOnce()) > 0);
      return hooks.some((hook) => (hook.type ?? hook.event) === 'webhook.test');
    };
    await until(tested, Boolean, 'the test event delivered');
    await checkPage(page, 'agent-editor');
  });

  it('plays the voice preview', async () => {
    await page.getByRole('button', { name: 'Preview voice' }).click();
    await page.getByText('Played the voice preview').waitFor({ timeout: 30_000 });
    const duration = Number(await page.evaluate(`document.querySelector('audio[aria-label="Voice preview"]').duration`));
    assert.ok(duration > 0.5, `the preview lasts ${duration} s`);
  });

  it('tests the saved function: the request and the response are shown, the function got the arguments', async () => {
    const fn = page.getByRole('group', { name: /^Function 1/ });
    await fn.getByRole('button', { name: 'Test function lookup_order' }).click();
    const args = fn.getByLabel('Test arguments for lookup_order');
    assert.deepEqual(JSON.parse(await args.inputValue()), { order_id: '' }, 'prefilled from the schema');
    await args.fill('{"order_id": "A-42"');
    await fn.locator('.field-error').filter({ hasText: /^Not valid JSON/ }).waitFor();
    await args.fill('{"order_id": "A-42"}');
    await fn.getByRole('button', { name: 'Run lookup_order' }).click();
    const result = fn.getByTestId('function-test-result');
    await result.getByTestId('function-test-status').filter({ hasText: '200' }).waitFor();
    await result.getByText('"shipped"', { exact: false }).waitFor();
    await result.getByText(`POST ${receiverOrigin}/orders`).waitFor();
    assert.equal(functionCalls.length, 1);
    assert.deepEqual(functionCalls[0].arguments, { order_id: 'A-42' });
    assert.equal(functionCalls[0].function, 'lookup_order');
  });

  it('chats with the agent in the test panel: it answers, and transfers on request', async () => {
    const log = page.getByRole('list', { name: 'Conversation' });
    await page.getByLabel('Message to the agent').fill('What are your opening hours?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await log.locator('li.chat-agent').first().waitFor();
    assert.ok(((await log.locator('li.chat-agent').first().textContent()) ?? '').length > 'Agent: '.length, 'a reply');
    // By keyboard: Enter in the message field sends it.
    await page.getByLabel('Message to the agent').focus();
    await page.keyboard.type('Can I speak to a human please?');
    await page.keyboard.press('Enter');
    await log.getByText('Transferred the call to +15550100300').waitFor();
    await page.getByText('The agent ended the conversation.').waitFor();
    assert.equal(await log.locator('li').count(), 4);
    await page.getByRole('button', { name: 'Start over' }).click();
    assert.equal(await log.locator('li').count(), 0);
  });

  it('places a sandbox call from the panel: its transcript appears, its extracted field and webhook events are on its page', async () => {
    await page.getByLabel('Caller script').fill("Hi, what are your opening hours?\nWe're thinking about the Pro plan\nThanks, goodbye!");
    await page.getByLabel('Variables (JSON)').fill('{"customer": "Ada"');
    await page.locator('.field-error').filter({ hasText: /^Not valid JSON/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Place sandbox call' }).isDisabled(), true, 'nothing placed with broken variables');
    await page.getByLabel('Variables (JSON)').fill('{"customer": "Ada", "vip": true}');
    await page.getByRole('button', { name: 'Place sandbox call' }).click();
    const panel = page.getByRole('region', { name: 'Sandbox call' });
    await panel.getByText('completed', { exact: true }).waitFor({ timeout: 60_000 });
    await panel.getByRole('cell', { name: 'Hi, what are your opening hours?' }).waitFor();
    await panel.getByRole('cell', { name: 'Hello, Acme support.' }).waitFor();
    await checkPage(page, 'agent-test-panel');
    const calls = (await api('GET', `/v1/calls?agent_id=${agent.id}`)).data as Array<{ id: string; status: string; variables: object; transcript: Array<{ text: string }> }>;
    assert.equal(calls.length, 1);
    assert.equal(calls[0].status, 'completed');
    assert.deepEqual(calls[0].variables, { customer: 'Ada', vip: 'true' });
    assert.ok(calls[0].transcript.some((line) => line.text === 'Hi, what are your opening hours?'));

    await panel.getByRole('link', { name: 'Open the call' }).click();
    await heading(page, 'Call');
    assert.equal(new URL(page.url()).pathname, `/calls/${calls[0].id}`);
    const events = page.getByRole('region', { name: 'Webhook events' });
    // call.completed is sent once the post-call work is done: deliver until it has arrived.
    const callIdOf = (hook: Record<string, unknown>) => hook.call_id ?? (hook.data as { call_id?: string }).call_id;
    const delivered = async () => {
      while ((await webhooks.runDueOnce()) > 0);
      return hooks.filter((hook) => callIdOf(hook) === calls[0].id).map((hook) => hook.type ?? hook.event);
    };
    await until(delivered, (types) => types.includes('call.completed'), 'call.completed delivered');
    await events.getByRole('button', { name: 'Refresh events' }).click();
    for (const type of ['call.started', 'call.transcript', 'call.ended', 'call.completed']) {
      await events.getByRole('row').filter({ hasText: type }).filter({ hasText: 'succeeded' }).first().waitFor();
      assert.ok((await delivered()).includes(type), `${type} reached the webhook`);
    }
    // The extraction field the editor added, found in what the caller said.
    await page.getByRole('region', { name: 'Extracted fields' }).locator('dd').filter({ hasText: /^pro$/ }).waitFor();
    assert.deepEqual((await api('GET', `/v1/calls/${calls[0].id}`)).extracted, { plan: 'pro' });
    assert.equal(await page.getByRole('button', { name: 'Hang up' }).count(), 0, 'an ended call has no controls');
    await checkPage(page, 'call-ended');
  });

  it('follows a live call from its page (its transcript as it goes), then hangs it up', async () => {
    const call = await slowCall();
    await page.goto(`${origin}/calls/${call.id}`);
    await heading(page, 'Call');
    // The greeting shows while the call is still live, from its call.transcript event.
    await page.getByRole('cell', { name: 'Hello, Acme support.' }).waitFor({ timeout: 30_000 });
    assert.equal((await api('GET', `/v1/calls/${call.id}`)).status, 'in_progress', 'still live');
    await checkPage(page, 'call-live');
    // Confirmed first: kept on "Keep the call" or Escape, ended on "Hang up now".
    await page.getByRole('button', { name: 'Hang up' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Hang up this call?' });
    await confirm.getByRole('button', { name: 'Keep the call' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Hang up' }).click();
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    assert.equal((await api('GET', `/v1/calls/${call.id}`)).status, 'in_progress', 'kept');
    await page.getByRole('button', { name: 'Hang up' }).click();
    await confirm.getByRole('button', { name: 'Hang up now' }).click();
    await page.locator('[data-field="Status"]').filter({ hasText: 'completed' }).waitFor();
    await page.locator('[data-field="Ended because"]').filter({ hasText: 'api hangup' }).waitFor();
    const ended = await api('GET', `/v1/calls/${call.id}`);
    assert.equal(ended.status, 'completed');
    assert.equal(ended.end_reason, 'api_hangup');
    await page.getByRole('region', { name: 'Status history' }).getByText('completed').waitFor();
  });

  it('transfers a live call from its page', async () => {
    const call = await slowCall();
    await page.goto(`${origin}/calls/${call.id}`);
    await heading(page, 'Call');
    await page.getByLabel('Transfer to').waitFor({ timeout: 30_000 });
    await page.getByLabel('Transfer to').fill('+15550100999');
    await page.getByRole('button', { name: 'Transfer', exact: true }).click();
    await page.locator('[data-field="Status"]').filter({ hasText: 'transferred' }).waitFor();
    const transferred = await until(() => api('GET', `/v1/calls/${call.id}`), (c) => c.status === 'transferred', 'the transfer');
    assert.equal(transferred.transferred_to, '+15550100999');
    await page.locator('[data-field="Transferred to"]').filter({ hasText: '+15550100999' }).waitFor();
  });

  it('pages beyond 50 calls: the second page holds the oldest', async () => {
    for (let i = 0; i < 51; i++) await api('POST', '/v1/calls/outbound', { agent_id: agent.id, to: '+15550100101' });
    const all = (await api('GET', '/v1/calls?limit=100')).data as Array<{ id: string }>;
    assert.ok(all.length > 50);
    await page.getByRole('link', { name: 'Calls', exact: true }).click();
    await heading(page, 'Calls');
    const rows = (table: Locator) => table.locator('tbody tr');
    const table = page.getByRole('table', { name: 'Calls' });
    await page.getByText(`Page 1: calls 1–50`).waitFor();
    assert.equal(await rows(table).count(), 50);
    assert.equal(await page.getByRole('button', { name: 'Previous page' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText(`Page 2: calls 51–${all.length}`).waitFor();
    assert.equal(await rows(table).count(), all.length - 50);
    const hrefs: Array<string | null> = [];
    for (let i = 0; i < all.length - 50; i++) hrefs.push(await rows(table).nth(i).getByRole('link').getAttribute('href'));
    assert.deepEqual(hrefs, all.slice(50).map((c) => `/calls/${c.id}`));
    assert.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true);
    await checkPage(page, 'calls-page-2');
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByText('Page 1: calls 1–50').waitFor();
    // A filter starts again from the first page.
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText(/^Page 2/).waitFor();
    await page.getByLabel('Status').selectOption('transferred');
    await until(() => rows(table).count(), (count) => count === 1, 'the transferred call alone');
    await rows(table).filter({ hasText: 'transferred' }).waitFor();
    assert.equal(await page.getByText(/^Page \d/).count(), 0, 'one page: no pager');
  });

  it('logged no error in the page', () => {
    assert.deepEqual(errors, []);
  });
});
