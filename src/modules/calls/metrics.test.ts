import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { startFakeOpenAi } from '../../../test/fakes/openai/llm.ts';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { createCallAgent, placeCall, waitForEnd, waitForPostCall, waitForTerminal } from './test-helpers.ts';

// /metrics after sandbox calls (DESIGN part 9, Observability): the turn latency and stage
// histograms counted by provider, provider errors by kind, the queued calls and the post-call
// backlog read from the database, live calls and media sessions, the event loop's delay.

const fake = await startFakeOpenAi({ apiKey: 'sk-test' });
after(() => fake.close());
const t = await buildTestApp({ env: { SANDBOX_SPEED: 'max', LLM_BASE_URL: fake.url, LLM_API_KEY: 'sk-test' } });

async function scrape(): Promise<string> {
  const res = await t.request({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200);
  return res.body;
}

/** The value of one sample (`name{labels}`), 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = match[2] ? match[2].split(',') : [];
    if (wanted.every((w) => have.includes(w))) return Number(match[3]);
  }
  return 0;
}

describe('/metrics of live calls', () => {
  it('counts every answering turn in the latency and stage histograms, by provider; queued calls and post-call backlog', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const before = await scrape();
    const placed = await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { latency: { stt_ms: 120, llm_first_token_ms: 200, tts_first_audio_ms: 150 } } });
    assert.ok(sample(await scrape(), 'vap_calls_queued') >= 1, 'the queued call is counted');
    const ended = await waitForTerminal(t, user, placed.id);
    assert.ok(sample(await scrape(), 'vap_post_call_jobs_pending') >= 1, 'its post-call work is pending');
    const call = await waitForPostCall(t, user, ended.id);
    const turns = call.latency.turns;
    assert.equal(turns, 2);
    const text = await scrape();
    const providers = { stt: 'sandbox', llm: 'builtin', tts: 'builtin' };
    const delta = (name: string, labels: Record<string, string>) => sample(text, name, labels) - sample(before, name, labels);
    assert.equal(delta('vap_turn_latency_seconds_count', providers), turns);
    // The sums are the call's own figures (its transcript's latency and timings), in seconds.
    type Entry = { latency_ms?: number; timings?: { stt_wait_ms: number; llm_first_token_ms: number; tts_first_audio_ms: number } };
    const answering = (call.transcript as Entry[]).filter((e) => e.latency_ms !== undefined);
    const seconds = (pick: (e: Entry) => number) => answering.reduce((sum, e) => sum + pick(e), 0) / 1000;
    assert.ok(seconds((e) => e.latency_ms ?? 0) > 0);
    assert.ok(Math.abs(delta('vap_turn_latency_seconds_sum', providers) - seconds((e) => e.latency_ms ?? 0)) < 1e-6);
    assert.ok(Math.abs(delta('vap_turn_stage_seconds_sum', { stage: 'stt', provider: 'sandbox' }) - seconds((e) => e.timings?.stt_wait_ms ?? 0)) < 1e-6);
    assert.ok(Math.abs(delta('vap_turn_stage_seconds_sum', { stage: 'llm_first_token', provider: 'builtin' }) - seconds((e) => e.timings?.llm_first_token_ms ?? 0)) < 1e-6);
    assert.ok(Math.abs(delta('vap_turn_stage_seconds_sum', { stage: 'tts_first_audio', provider: 'builtin' }) - seconds((e) => e.timings?.tts_first_audio_ms ?? 0)) < 1e-6);
    assert.equal(delta('vap_turn_latency_seconds_bucket', { ...providers, le: '+Inf' }), turns);
    assert.equal(delta('vap_turn_stage_seconds_count', { stage: 'stt', provider: 'sandbox' }), turns);
    assert.equal(delta('vap_turn_stage_seconds_count', { stage: 'llm_first_token', provider: 'builtin' }), turns);
    assert.equal(delta('vap_turn_stage_seconds_count', { stage: 'tts_first_audio', provider: 'builtin' }), turns);
    assert.equal(sample(text, 'vap_calls_live'), 0, 'no call runs any more');
    for (const name of ['vap_calls_live', 'vap_calls_queued', 'vap_media_sessions', 'vap_post_call_jobs_pending', 'vap_post_call_failures_total', 'vap_provider_errors_total']) {
      assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), `${name} is exported`);
    }
    assert.match(text, /^nodejs_eventloop_lag_p99_seconds \d/m, 'the event loop delay');

    // The example dashboard (docs/operations.md) queries only metrics that exist.
    const dashboard = fs.readFileSync(new URL('../../../docs/grafana/voice-agent-platform.json', import.meta.url), 'utf8');
    const queried = new Set([...dashboard.matchAll(/\b((?:vap|webhook|http|nodejs|process)_[a-z0-9_]+)/g)].map((m) => m[1].replace(/_(bucket|count|sum)$/, '')));
    assert.ok(queried.size >= 10);
    for (const name of queried) assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), `the dashboard's ${name} is exported`);
  });

  it('counts provider errors by kind', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { llm: { provider: 'openai', model: 'gpt-4o-mini' } });
    fake.reply(...Array.from({ length: 8 }, () => ({ error: { status: 400, message: 'refused' } })));
    const before = sample(await scrape(), 'vap_provider_errors_total', { kind: 'llm_failed' });
    await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['Are you open tonight?', 'Thanks, goodbye!'] } })).id);
    assert.ok(sample(await scrape(), 'vap_provider_errors_total', { kind: 'llm_failed' }) > before);
  });
});
