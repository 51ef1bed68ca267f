import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { draftField, draftOf, updateOf } from '../../web/dashboard/src/pages/agent-draft.ts';
import { guardRefresh, type Lock, type Rotation, type RotationLog, type StoredTokens, type TokenStore } from '../../web/dashboard/src/api/refresh-guard.ts';

// The dashboard's client logic that runs without a browser: the refresh shared by tabs, and the
// agent editor's form ↔ API conversion.

function memoryStore(initial?: StoredTokens): TokenStore & { value?: StoredTokens } {
  const store = {
    value: initial,
    read: () => store.value,
    write: (tokens: StoredTokens) => {
      store.value = tokens;
    },
    clear: () => {
      store.value = undefined;
    },
  };
  return store;
}

function memoryLog(): RotationLog & { value?: Rotation } {
  const log: RotationLog & { value?: Rotation } = {
    last: async () => log.value,
    record: async (rotation) => {
      log.value = rotation;
    },
  };
  return log;
}

/** One lock for every "tab": work runs one at a time, in order. */
function mutex(): Lock {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    run<T>(_name: string, work: () => Promise<T>): Promise<T> {
      const result = tail.then(work);
      tail = result.catch(() => undefined);
      return result;
    },
  };
}

const refresh = (token: string) => ({ method: 'POST', body: JSON.stringify({ refresh_token: token }), headers: { 'content-type': 'application/json' } });

describe('guardRefresh', () => {
  it('spends a refresh token once across tabs: the second gets the tokens the first one got, whatever its stored view', async () => {
    const store = memoryStore({ accessToken: 'a1', refreshToken: 'rt1', expiresAt: 0 });
    const sent: string[] = [];
    const server = async (_input: string | URL | Request, init?: RequestInit) => {
      sent.push(JSON.parse(String(init?.body)).refresh_token);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return Response.json({ access_token: 'a2', refresh_token: 'rt2', token_type: 'Bearer', expires_in: 3600 });
    };
    const lock = mutex();
    const log = memoryLog();
    const tabA = guardRefresh(server, store, log, lock, () => 1_000);
    // Tab B's view of the stored tokens lags (as localStorage does across tabs): the log decides.
    const stale = { ...memoryStore({ accessToken: 'a1', refreshToken: 'rt1', expiresAt: 0 }), write: () => undefined };
    const tabB = guardRefresh(server, stale, log, lock, () => 1_000);
    const [a, b] = await Promise.all([tabA('http://x/v1/auth/refresh', refresh('rt1')), tabB('http://x/v1/auth/refresh', refresh('rt1'))]);
    assert.deepEqual(sent, ['rt1'], 'the platform saw the refresh token once');
    assert.equal(((await a.json()) as { refresh_token: string }).refresh_token, 'rt2');
    assert.deepEqual(await b.json(), { access_token: 'a2', refresh_token: 'rt2', token_type: 'Bearer', expires_in: 3600 });
    assert.deepEqual(store.value, { accessToken: 'a2', refreshToken: 'rt2', expiresAt: 1_000 + 3_600_000 });
  });

  it('passes other requests through, and a refused refresh stores nothing', async () => {
    const store = memoryStore({ accessToken: 'a1', refreshToken: 'rt1', expiresAt: 0 });
    const seen: string[] = [];
    const server = async (input: string | URL | Request) => {
      seen.push(String(input));
      return Response.json({ code: 'invalid_token' }, { status: 401 });
    };
    const log = memoryLog();
    const guarded = guardRefresh(server, store, log, mutex());
    assert.equal((await guarded('http://x/v1/agents', { method: 'GET' })).status, 401);
    assert.equal((await guarded('http://x/v1/auth/refresh', refresh('rt1'))).status, 401);
    assert.deepEqual(seen, ['http://x/v1/agents', 'http://x/v1/auth/refresh']);
    assert.equal(store.value?.refreshToken, 'rt1');
    assert.equal(log.value, undefined);
  });
});

describe('the agent draft', () => {
  const agent = {
    id: 'agent_1',
    name: 'Ada',
    prompt: 'Be kind.',
    first_message: null,
    language: 'en-US',
    voice: 'builtin-ava',
    llm: { provider: 'builtin' as const, model: 'builtin-1', temperature: 0.7 },
    knowledge_base_ids: [],
    transfer_number: null,
    functions: [],
    extraction_fields: [],
    end_call_phrases: ['Goodbye', 'Bye now'],
    max_duration_seconds: 600,
    turn_end_silence_ms: 500,
    barge_in_min_ms: 250,
    interruptible: true,
    silence_timeout_seconds: 10,
    voicemail: { action: 'hangup' as const, message: null },
    webhook_url: null,
    webhook_events: [],
    metadata: {},
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  };

  it('round-trips an agent: empty texts become null, one phrase per line, numbers parsed', () => {
    const draft = { ...draftOf(agent), end_call_phrases: ' Goodbye \n\nSee you\n', llm_temperature: '0.3', max_duration_seconds: '120', webhook_url: ' https://example.com/hook ' };
    const { body, errors } = updateOf(draft);
    assert.deepEqual(errors, {});
    assert.equal(body.first_message, null);
    assert.deepEqual(body.end_call_phrases, ['Goodbye', 'See you']);
    assert.deepEqual(body.llm, { provider: 'builtin', model: 'builtin-1', temperature: 0.3 });
    assert.equal(body.max_duration_seconds, 120);
    assert.equal(body.webhook_url, 'https://example.com/hook');
  });

  it('names the fields it cannot parse, and maps the API error paths to them', () => {
    const { errors } = updateOf({ ...draftOf(agent), llm_temperature: 'warm', max_duration_seconds: '1.5', silence_timeout_seconds: '' });
    assert.deepEqual(Object.keys(errors).sort(), ['llm_temperature', 'max_duration_seconds', 'silence_timeout_seconds']);
    assert.equal(draftField('llm.temperature'), 'llm_temperature');
    assert.equal(draftField('end_call_phrases.2'), 'end_call_phrases');
    assert.equal(draftField('webhook_url'), 'webhook_url');
    assert.equal(draftField('functions.0.url'), 'functions.0.url');
    assert.equal(draftField('created_at'), undefined);
  });
});
