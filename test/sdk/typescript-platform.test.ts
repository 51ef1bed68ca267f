import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import WebSocket from 'ws';
import { AuthenticationError, toFile, ValidationError, VoiceAgent, WebhookVerificationError } from '../../sdks/typescript/src/index.ts';
import { uniqueEmail } from '../support/fixtures.ts';
import { startPlatform } from './platform.ts';

// The TypeScript SDK against the real platform (listening, workers running, 3-second access
// tokens): login and the shared refresh, typed validation errors, pagination, streamed uploads
// and downloads, workspaces, voice sessions and their media socket. The quickstart flow (call,
// recording, webhooks) is typescript-quickstart.test.ts.

const { baseURL } = await startPlatform();
const password = 'correct horse battery';

/** A new account, and a client logged in as it that counts its token calls. */
async function account() {
  const email = uniqueEmail('sdk');
  await new VoiceAgent({ baseURL }).auth.register({ email, password });
  const calls = { login: 0, refresh: 0, saved: [] as string[] };
  const fetch: typeof globalThis.fetch = (url, init) => {
    const path = new URL(String(url)).pathname;
    if (path === '/v1/auth/login') calls.login++;
    if (path === '/v1/auth/refresh') calls.refresh++;
    return globalThis.fetch(url, init);
  };
  const client = new VoiceAgent({ baseURL, email, password, fetch, onTokens: (tokens) => void calls.saved.push(tokens.refreshToken) });
  return { client, calls, email };
}

/**
 * Waits out the access token (3 s here) by its own `exp` claim, which the server rounds up (it may
 * outlive the `expires_in` the SDK counts from by up to a second): the next request meets token_expired.
 */
async function expire(client: VoiceAgent) {
  const until = (decodeJwt(client.tokens!.accessToken).exp ?? 0) * 1000 + 50;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())));
}

const stream = (...chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

describe('TypeScript SDK on the platform', () => {
  it('logs in at the first request; concurrent requests on an expired token share one refresh', async () => {
    const { client, calls } = await account();
    const me = await client.auth.me();
    assert.equal(calls.login, 1);
    assert.equal(calls.saved.length, 1, 'onTokens was told the login');
    await expire(client);
    const pages = await Promise.all(Array.from({ length: 5 }, () => client.agents.list({ limit: 1 })));
    assert.ok(pages.every((page) => Array.isArray(page.data)));
    assert.equal(calls.refresh, 1, 'one refresh for the five requests');
    assert.equal(calls.login, 1);
    assert.equal(calls.saved.length, 2);
    // Saved tokens resume a session without the password (the refresh token rotates on use).
    await expire(client);
    const resumed = new VoiceAgent({ baseURL, accessToken: client.tokens!.accessToken, refreshToken: calls.saved.at(-1) });
    assert.equal((await resumed.auth.me()).id, me.id);
  });

  it('without credentials a request is a typed 401; a bad body is a ValidationError naming the field', async () => {
    const anonymous = new VoiceAgent({ baseURL });
    const refused = await anonymous.agents.list().catch((e: unknown) => e);
    assert.ok(refused instanceof AuthenticationError, String(refused));
    assert.equal(refused.status, 401);
    assert.match(refused.requestId ?? '', /\S/);
    const { client } = await account();
    const invalid = await client.agents.create({ name: 'x', max_duration_seconds: -5 }).catch((e: unknown) => e);
    assert.ok(invalid instanceof ValidationError, String(invalid));
    assert.equal(invalid.code, 'validation_failed');
    assert.ok(invalid.errors.some((e) => e.path.includes('max_duration_seconds')), JSON.stringify(invalid.errors));
  });

  it('a list is awaited for its first page, or iterated across every page', async () => {
    const { client } = await account();
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await client.agents.create({ name: `Agent ${i}` })).id);
    const first = await client.agents.list({ limit: 2 });
    assert.equal(first.data.length, 2);
    assert.equal(first.has_more, true);
    const seen: string[] = [];
    for await (const agent of client.agents.list({ limit: 2 })) seen.push(agent.id);
    assert.deepEqual(seen.sort(), created.sort());
    let pages = 0;
    for await (const page of client.agents.list({ limit: 2 }).pages()) pages += page.data.length > 0 ? 1 : 0;
    assert.equal(pages, 3);
  });

  it('pages through calls: three sandbox calls placed, listed two to a page', async () => {
    const { client } = await account();
    const agent = await client.agents.create({ name: 'Caller' });
    const placed: string[] = [];
    for (let i = 0; i < 3; i++) placed.push((await client.calls.create({ agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['Goodbye!'] } })).id);
    const seen: string[] = [];
    let pages = 0;
    for await (const page of client.calls.list({ limit: 2 }).pages()) {
      pages++;
      seen.push(...page.data.map((call) => call.id));
    }
    assert.equal(pages, 2);
    assert.deepEqual(seen.sort(), placed.sort());
  });

  it('uploads stream: a campaign CSV and a knowledge-base file; an export downloads as a stream', async () => {
    const { client, calls } = await account();
    const agent = await client.agents.create({ name: 'Uploader' });
    const campaign = await client.campaigns.create({ name: 'Reminders', agent_id: agent.id });
    // Idle past the access token's life: the upload, which cannot be resent, refreshes it first.
    await expire(client);
    const upload = await client.campaigns.upload(campaign.id, stream('phone,first_name\n', '+15550100200,Grace\n', '+15550100201,Alan\n'));
    assert.equal(upload.accepted, 2);
    assert.ok(calls.refresh >= 1, 'refreshed before the upload');
    const base = await client.knowledgeBases.create({ name: 'FAQ' });
    const source = await client.knowledgeBases.addSource(base.id, { file: toFile(stream('Opening hours: ', 'nine to five.\n'), 'hours.txt', 'text/plain') });
    assert.equal(source.title, 'hours.txt');
    const exported = await client.campaigns.results(campaign.id);
    assert.equal(exported.contentType, 'text/csv');
    let csv = '';
    for await (const chunk of exported.stream() as unknown as AsyncIterable<Uint8Array>) csv += new TextDecoder().decode(chunk);
    assert.match(csv, /\+15550100200/);
    assert.match(csv, /\+15550100201/);
  });

  it('withWorkspace acts in another workspace of the same login', async () => {
    const { client } = await account();
    const other = await client.workspaces.create({ name: 'Second' });
    const there = client.withWorkspace(other.id);
    const agent = await there.agents.create({ name: 'Elsewhere' });
    assert.equal((await there.agents.retrieve(agent.id)).id, agent.id);
    await assert.rejects(client.agents.retrieve(agent.id), (error: unknown) => (error as { status?: number }).status === 404);
  });

  it('voiceSessions.create answers the session and its media token; connect opens the media socket', async () => {
    const { client } = await account();
    const agent = await client.agents.create({ name: 'Voice', first_message: 'Hello there.' });
    const session = await client.voiceSessions.create({ agent_id: agent.id, external_user_id: 'user-1' });
    assert.match(session.id, /^vs_/);
    assert.equal(session.transport, 'builtin');
    assert.match(session.token, /\S{16,}/);
    const socket = client.voiceSessions.connect(session, { WebSocket });
    const first = await new Promise<Buffer | ArrayBuffer>((resolve, reject) => {
      socket.on('message', (data: Buffer | ArrayBuffer, binary: boolean) => binary && resolve(data));
      socket.on('error', reject);
    });
    assert.ok((first as ArrayBuffer).byteLength > 0, 'the agent speaks first: PCM16 audio');
    socket.close();
    const ended = await client.voiceSessions.end(session.id).catch(() => client.voiceSessions.retrieve(session.id));
    assert.equal(ended.id, session.id);
  });

  it('connect() without options opens the socket with the global WebSocket (Node 20 with --experimental-websocket, as Node 22 has it)', async () => {
    const { email } = await account();
    const script = new URL('./global-websocket.ts', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(process.execPath, ['--experimental-websocket', '--no-warnings', '--import', 'tsx', script, baseURL, email, password], { timeout: 90_000 });
    assert.ok(Number(stdout.trim()) > 0, `the first audio message: ${stdout}`);
  });

  it('a tampered or stale delivery is refused by verifyWebhook', async () => {
    const { client } = await account();
    const endpoint = await client.webhooks.put({ webhook_url: 'https://example.com/hooks' });
    const secret = endpoint.webhook_secret;
    const body = JSON.stringify({ event: 'wallet.low_balance', data: {} });
    const { signedHeaders } = await import('../../src/platform/outbox/signing.ts');
    const headers = signedHeaders({ id: 'evt_1', body, at: new Date(), secret, userAgent: 'test' });
    assert.deepEqual(await client.webhooks.verify(body, headers, secret), JSON.parse(body));
    assert.deepEqual(await client.webhooks.verify(body, headers, secret, { scheme: 'service' }), JSON.parse(body));
    await assert.rejects(client.webhooks.verify(body.replace('low', 'big'), headers, secret), WebhookVerificationError);
    await assert.rejects(client.webhooks.verify(body.replace('low', 'big'), headers, secret, { scheme: 'service' }), WebhookVerificationError);
    await assert.rejects(client.webhooks.verify(body, headers, secret, { now: new Date(Date.now() + 10 * 60_000) }), /tolerance/);
    await assert.rejects(client.webhooks.verify(body, headers, `whsec_${Buffer.from('another secret!!').toString('base64')}`), WebhookVerificationError);
  });
});
