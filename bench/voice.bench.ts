// Voice latency of real phone calls through the whole platform (issue 15): inbound Twilio calls from
// a local fake Twilio (Media Streams over a real WebSocket, mu-law audio of synthesised speech,
// signed webhooks), heard by the OpenAI-compatible STT adapter, answered by the OpenAI-compatible
// LLM adapter and spoken by the streamed OpenAI-compatible TTS adapter, each against a local fake
// at a realistic pace: STT 80 ms, LLM first token 200 ms then 40 tokens/s, TTS first audio 150 ms.
// The far end runs in two worker threads of its own (bench/support/voice-far-end.ts: callers, models):
// in a deployment they are other machines, and their work must not share the platform's event loop.
// Measured per agent turn, by the call session: from the moment the VAD ends the caller's turn to
// the first agent frame written to the Twilio socket (`latency_ms`), p50/p95 at 1 and 50
// concurrent calls. The baseline, measured in the same run through the same SDKs and fakes, is the
// floor no pipeline can beat: STT round trip + the LLM's time until its first sentence is complete
// (the next word has begun) + TTS time to first audio. Goal: p95 ≤ baseline + 30 ms. Calls arrive
// 80 ms apart (BENCH_ARRIVAL_MS), so 50 callers' turns are spread as independent callers' are; each
// level above one call runs again with arrivals 20 ms apart (every turn of 50 calls ends within
// the same second: the worst case, reported beside it).
// BENCH_MODE=realtime measures a speech-to-speech agent instead (issue 31): the caller's mu-law goes
// as it is (audio/pcmu) to a fake OpenAI Realtime server whose own time to first audio is 300 ms,
// and the model's mu-law back to the Twilio socket; the floor (PCM, one session at a time), measured in
// the same run through the same adapter, is that model's time from hearing the turn end to its
// first audio; the platform's latency is from the model's end of turn to the first frame on the
// Twilio socket. Results in results/voice-realtime.json.
// BENCH_STT=streaming measures the cascade with streaming recognition (STT_STREAMING=realtime,
// issue 31): the caller's audio is teed to a Realtime transcription session (the same fake, its
// transcript 80 ms after the model's own VAD ends the utterance, as the batch STT's pace) and the
// turn takes the final result when the platform's VAD ends it; compare with the batch runs (early
// transcription at 250 ms, the default, and BENCH_EARLY_TRANSCRIPT_MS=0). Results in
// results/voice-streaming.json.
//   node --import tsx bench/voice.bench.ts        (BENCH_LEVELS=1,50, BENCH_TURNS=3, BENCH_ARRIVAL_MS=80, BENCH_MODE=cascade|realtime)
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import OpenAI from 'openai';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { tracingEnv, tracingSuffix } from './support/otlp-sink.ts';
import { systemClock } from '../src/platform/clock.ts';
import { migrateToLatest, openDatabase } from '../src/platform/db/database.ts';
import { createLogger } from '../src/platform/logging.ts';
import { createOpenAiStt } from '../src/providers/stt/openai.ts';
import { createOpenAiTts } from '../src/providers/tts/openai.ts';
import { createOpenAiRealtime } from '../src/providers/realtime/openai-realtime.ts';
import { startModuleWorker } from '../src/platform/module-worker.ts';
import type { FarEndRequest, FarEndSettings } from './support/voice-far-end.ts';
import { freePort } from '../test/support/ports.ts';

const LEVELS = (process.env.BENCH_LEVELS ?? '1,50').split(',').map(Number);
const TURNS = Number(process.env.BENCH_TURNS ?? 3);
/**
 * Time between two calls' arrivals. Callers with the same script keep the phase they arrived with:
 * 80 ms spreads 50 calls over about one turn cycle, as independent callers' turns are spread;
 * 20 ms makes all 50 end their turns within the same second (the worst case, also reported).
 */
const ARRIVAL_MS = Number(process.env.BENCH_ARRIVAL_MS ?? 80);
const LOCKSTEP_ARRIVAL_MS = 20;
/** Each level with spread arrivals; levels above one call also in lockstep. */
const RUNS = LEVELS.flatMap((calls) => (calls > 1 ? [{ calls, arrivalMs: ARRIVAL_MS }, { calls, arrivalMs: LOCKSTEP_ARRIVAL_MS }] : [{ calls, arrivalMs: ARRIVAL_MS }]));
const PACE = { sttMs: 80, llmFirstTokenMs: 200, tokensPerSecond: 40, ttsFirstAudioMs: 150, realtimeFirstAudioMs: 300 };
const REALTIME = process.env.BENCH_MODE === 'realtime';
const STREAMING = !REALTIME && process.env.BENCH_STT === 'streaming';
const RESULTS_NAME = REALTIME ? 'voice-realtime' : STREAMING ? 'voice-streaming' : 'voice';
const GOAL_OVERHEAD_MS = 30;
const QUESTION = 'What time do you open tomorrow?';
const ACCOUNT_SID = `AC${'be'.repeat(16)}`;
const AUTH_TOKEN = 'bench-twilio-auth-token';
const PUBLIC_BASE_URL = 'https://voice.bench.test';

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
};
const median = (values: number[]) => percentile(values, 50) as number;

interface FarEnd {
  urls: { twilio: string; stt: string; llm: string; tts: string; realtime: string };
  run(request: FarEndRequest): Promise<{ failures?: string[]; loopP99Ms?: number; loopMaxMs?: number; modelsLoopP99Ms?: number; modelsLoopMaxMs?: number }>;
}

/** A far-end thread (bench/support/voice-far-end.ts) in the given role, once it is ready. */
async function startFarEndThread(settings: FarEndSettings) {
  const worker = startModuleWorker(new URL('./support/voice-far-end.ts', import.meta.url), { workerData: { ...settings } });
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  const ready = await next();
  const ask = async (request: Record<string, unknown>) => {
    const answer = next();
    worker.postMessage(request);
    return answer;
  };
  return { ready, ask, stop: () => worker.terminate() };
}

async function startFarEnd(port: number): Promise<FarEnd> {
  const settings: FarEndSettings = {
    role: 'models',
    port,
    accountSid: ACCOUNT_SID,
    authToken: AUTH_TOKEN,
    publicBaseUrl: PUBLIC_BASE_URL,
    pace: PACE,
    question: QUESTION,
    replies: RUNS.reduce((sum, run) => sum + run.calls, 0) * (TURNS + 2) + 50,
    streaming: STREAMING,
  };
  const models = await startFarEndThread(settings);
  const callers = await startFarEndThread({ ...settings, role: 'callers' });
  const urls = { twilio: String(callers.ready.twilio), stt: String(models.ready.stt), llm: String(models.ready.llm), tts: String(models.ready.tts), realtime: String(models.ready.realtime) };
  return {
    urls,
    async run(request) {
      if (request.type === 'close') {
        await Promise.all([models.ask(request), callers.ask(request)]);
        await Promise.all([models.stop(), callers.stop()]);
        return {};
      }
      await models.ask({ type: 'loop' });
      const result = (await callers.ask(request)) as { failures?: string[]; loopP99Ms?: number; loopMaxMs?: number };
      const modelsLoop = (await models.ask({ type: 'loop' })) as { loopP99Ms: number; loopMaxMs: number };
      return { ...result, modelsLoopP99Ms: modelsLoop.loopP99Ms, modelsLoopMaxMs: modelsLoop.loopMaxMs };
    },
  };
}

/** The floor, through the same SDKs and fakes, one request at a time: what no pipeline can beat. */
async function measureBaseline(urls: FarEnd['urls']) {
  const stt = createOpenAiStt({ baseUrl: urls.stt, model: 'whisper-1', timeoutMs: 5000 });
  const client = new OpenAI({ baseURL: urls.llm, apiKey: 'bench' });
  const tts = createOpenAiTts({ baseUrl: urls.tts, model: 'tts-1' });
  // A second of speech-like noise stands in for the caller's utterance (the fake hears nothing).
  const utterance = Int16Array.from({ length: 16_000 }, (_, i) => Math.round(3000 * Math.sin(i / 7)));
  const samples = { stt: [] as number[], llm: [] as number[], tts: [] as number[] };
  for (let i = 0; i < 5; i++) {
    let started = performance.now();
    await stt.transcribe(utterance, { language: 'en-US' });
    samples.stt.push(performance.now() - started);

    started = performance.now();
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: QUESTION }] });
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      // A sentence is complete once the next word has begun (as the runtime's sentence cutter sees it).
      if (/[.!?]\s+\S/.test(text)) break;
    }
    samples.llm.push(performance.now() - started);
    const firstSentence = text.slice(0, text.search(/[.!?]\s/) + 1);

    started = performance.now();
    for await (const _ of tts.stream?.(firstSentence, 'openai-alloy') ?? []) break;
    samples.tts.push(performance.now() - started);
  }
  const figures = { stt_ms: Math.round(median(samples.stt)), llm_first_sentence_ms: Math.round(median(samples.llm)), tts_first_audio_ms: Math.round(median(samples.tts)) };
  return { ...figures, floor_ms: figures.stt_ms + figures.llm_first_sentence_ms + figures.tts_first_audio_ms };
}

/**
 * A speech-to-speech model's floor: through the same adapter, one session at a time, a second of
 * speech then silence; from the model's end of turn (speech_stopped) to its first audio.
 */
async function measureRealtimeBaseline(url: string) {
  const model = createOpenAiRealtime({ baseUrl: url, apiKey: 'bench', model: 'gpt-realtime', transcriptionModel: 'gpt-4o-transcribe', connectTimeoutMs: 5000 });
  const samples: number[] = [];
  const speech = Int16Array.from({ length: 320 }, (_, i) => Math.round(6000 * Math.sin(i / 7)));
  for (let i = 0; i < 5; i++) {
    const session = await model.open({ instructions: 'Answer briefly.', voice: 'alloy', language: 'en-US', tools: [], turnEndSilenceMs: 500, interruptResponse: false });
    let stoppedAt = 0;
    const firstAudio = new Promise<number>((resolve) =>
      session.onEvent((event) => {
        if (event.type === 'speech_stopped') stoppedAt = performance.now();
        if (event.type === 'audio' && stoppedAt > 0) resolve(performance.now() - stoppedAt);
      }),
    );
    for (let f = 0; f < 50; f++) session.sendAudio(speech);
    for (let f = 0; f < 35; f++) session.sendAudio(new Int16Array(320));
    samples.push(await firstAudio);
    session.close();
  }
  return { model_first_audio_ms: Math.round(median(samples)), floor_ms: Math.round(median(samples)) };
}

async function main() {
  const port = await freePort();
  const farEnd = await startFarEnd(port);
  const baseline = REALTIME ? await measureRealtimeBaseline(farEnd.urls.realtime) : await measureBaseline(farEnd.urls);
  console.log(JSON.stringify({ baseline }));

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bench-voice-'));
  const tracing = await tracingEnv();
  const config = loadConfig({
    DATA_DIR: dataDir,
    TELEPHONY_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    TWILIO_API_BASE_URL: farEnd.urls.twilio,
    PUBLIC_BASE_URL,
    STT_BASE_URL: farEnd.urls.stt,
    // The caller's words go to STT at a 250 ms pause (the default); BENCH_EARLY_TRANSCRIPT_MS=0 waits for the turn's end.
    STT_EARLY_TRANSCRIPT_MS: process.env.BENCH_EARLY_TRANSCRIPT_MS ?? '250',
    LLM_BASE_URL: farEnd.urls.llm,
    LLM_API_KEY: 'bench',
    TTS_BASE_URL: farEnd.urls.tts,
    REALTIME_BASE_URL: farEnd.urls.realtime,
    REALTIME_API_KEY: 'bench',
    ...(STREAMING ? { STT_STREAMING: 'realtime' } : {}),
    ALLOW_PRIVATE_URLS: 'true',
    RATE_LIMIT_USER_PER_MIN: '1000000',
    MAX_CONCURRENT_CALLS: '1000',
    SIGNUP_CREDIT_USD: '100000',
    LOG_LEVEL: 'silent',
    ...tracing.env,
  });
  // BENCH_DATABASE_URL: PostgreSQL instead of the embedded PGlite (whose file writes are synchronous).
  const database = await openDatabase({ databaseUrl: process.env.BENCH_DATABASE_URL, pgliteDir: path.join(dataDir, 'pglite') });
  await migrateToLatest(database);
  const { app } = await buildApp({ config, database, clock: systemClock, jwtSecret: 'x'.repeat(40), logger: createLogger({ level: 'silent' }) });
  await app.listen({ port, host: '127.0.0.1' });
  const inject = (method: 'GET' | 'POST', url: string, token?: string, payload?: unknown) =>
    app.inject({ method, url, payload: payload as object, headers: token ? { authorization: `Bearer ${token}` } : {} });
  await inject('POST', '/v1/auth/register', undefined, { email: 'bench@example.com', password: 'bench password' });
  const token = (await inject('POST', '/v1/auth/login', undefined, { email: 'bench@example.com', password: 'bench password' })).json().access_token;
  const agent = (
    await inject('POST', '/v1/agents', token, {
      name: 'Ada',
      first_message: 'Hello, Ada here.',
      ...(REALTIME ? { llm: { provider: 'openai-realtime' }, voice: 'alloy' } : { llm: { provider: 'openai', model: 'gpt-4o-mini' }, voice: 'openai-alloy' }),
      silence_timeout_seconds: 120,
    })
  ).json();
  const number = (await inject('GET', '/v1/phone-numbers/available?country=US', token)).json().data[0].number;
  const bought = (await inject('POST', '/v1/phone-numbers/buy', token, { number })).json();
  await inject('POST', `/v1/phone-numbers/${bought.id}/assign`, token, { agent_id: agent.id });

  const levels = [];
  for (const { calls: concurrent, arrivalMs } of RUNS) {
    const since = new Date();
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const gcPauses: number[] = [];
    const gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) gcPauses.push(entry.duration);
    });
    gcObserver.observe({ entryTypes: ['gc'] });
    // BENCH_PROFILE=dir: a CPU profile of the platform's main thread during each level.
    const profiler = process.env.BENCH_PROFILE ? new Session() : null;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const cpuStart = process.cpuUsage();
    const started = performance.now();
    const { failures = [], loopP99Ms, loopMaxMs, modelsLoopP99Ms, modelsLoopMaxMs } = await farEnd.run({ type: 'level', calls: concurrent, turns: TURNS, to: number, arrivalMs });
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuStart);
    loop.disable();
    gcObserver.disconnect();
    if (profiler && process.env.BENCH_PROFILE) {
      const { profile } = await profiler.post('Profiler.stop');
      fs.mkdirSync(process.env.BENCH_PROFILE, { recursive: true });
      fs.writeFileSync(path.join(process.env.BENCH_PROFILE, `voice-${concurrent}-${arrivalMs}ms.cpuprofile`), JSON.stringify(profile));
      profiler.disconnect();
    }
    // The calls' own figures, once each has ended and been journaled.
    let rows: Array<{ transcript: unknown }> = [];
    for (let i = 0; i < 200; i++) {
      rows = await database.db.selectFrom('calls').select(['transcript', 'status']).where('created_at', '>=', since).where('status', 'not in', ['queued', 'ringing', 'in_progress']).execute();
      if (rows.length >= concurrent) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    type Entry = { latency_ms?: number; timings?: { stt_ms: number; stt_wait_ms?: number; llm_first_token_ms: number; tts_first_audio_ms: number } };
    const turns = rows.flatMap((row) => (row.transcript as Entry[]).filter((e) => typeof e.latency_ms === 'number'));
    const latencies = turns.map((e) => e.latency_ms as number);
    const p95 = percentile(latencies, 95);
    const level = {
      calls: concurrent,
      arrival_ms: arrivalMs,
      ended: rows.length,
      caller_failures: failures.length,
      turns: latencies.length,
      latency_p50_ms: percentile(latencies, 50),
      latency_p95_ms: p95,
      overhead_p95_ms: p95 === null ? null : p95 - baseline.floor_ms,
      stt_p50_ms: percentile(turns.map((e) => e.timings?.stt_ms ?? 0), 50),
      llm_first_token_p50_ms: percentile(turns.map((e) => e.timings?.llm_first_token_ms ?? 0), 50),
      stt_wait_p50_ms: percentile(turns.map((e) => e.timings?.stt_wait_ms ?? 0), 50),
      stt_wait_p95_ms: percentile(turns.map((e) => e.timings?.stt_wait_ms ?? 0), 95),
      tts_first_audio_p50_ms: percentile(turns.map((e) => e.timings?.tts_first_audio_ms ?? 0), 50),
      stt_p95_ms: percentile(turns.map((e) => e.timings?.stt_ms ?? 0), 95),
      llm_first_token_p95_ms: percentile(turns.map((e) => e.timings?.llm_first_token_ms ?? 0), 95),
      tts_first_audio_p95_ms: percentile(turns.map((e) => e.timings?.tts_first_audio_ms ?? 0), 95),
      // What the components do not explain: the LLM's first sentence after its first token, and the platform.
      rest_p95_ms: percentile(turns.map((e) => (e.latency_ms as number) - (e.timings ? e.timings.stt_ms + e.timings.llm_first_token_ms + e.timings.tts_first_audio_ms : 0)), 95),
      rest_p50_ms: percentile(turns.map((e) => (e.latency_ms as number) - (e.timings ? e.timings.stt_ms + e.timings.llm_first_token_ms + e.timings.tts_first_audio_ms : 0)), 50),
      event_loop_delay_p99_ms: Math.round(loop.percentile(99) / 1e5) / 10,
      event_loop_delay_max_ms: Math.round(loop.max / 1e5) / 10,
      gc_pause_max_ms: Math.round(Math.max(0, ...gcPauses) * 10) / 10,
      gc_pause_total_ms: Math.round(gcPauses.reduce((a, b) => a + b, 0)),
      callers_loop_delay_p99_ms: loopP99Ms,
      callers_loop_delay_max_ms: loopMaxMs,
      models_loop_delay_p99_ms: modelsLoopP99Ms,
      models_loop_delay_max_ms: modelsLoopMaxMs,
      process_cpu_percent: Math.round(((cpu.user + cpu.system) / 1e6 / seconds) * 100),
      meets_goal: (p95 ?? Number.POSITIVE_INFINITY) <= baseline.floor_ms + GOAL_OVERHEAD_MS,
    };
    console.log(JSON.stringify(level));
    levels.push(level);
  }
  await app.close();
  await tracing.close();
  await database.close();
  await farEnd.run({ type: 'close' });
  fs.rmSync(dataDir, { recursive: true, force: true });

  const summary = {
    benchmark: RESULTS_NAME,
    recognition: REALTIME ? 'the model' : STREAMING ? 'streaming (STT_STREAMING=realtime)' : 'batch',
    machine: { cpus: os.cpus().length, node: process.version },
    database: process.env.BENCH_DATABASE_URL ? 'postgresql' : 'pglite',
    pace: PACE,
    turns_per_call: TURNS,
    early_transcript_ms: Number(process.env.BENCH_EARLY_TRANSCRIPT_MS ?? 250),
    baseline,
    goal: `latency p95 ≤ baseline floor + ${GOAL_OVERHEAD_MS} ms`,
    levels,
    note: REALTIME
      ? 'One 2-core machine runs the platform, the far end (fake Twilio with its callers; the fake Realtime model: two worker threads) and the database. Twilio\'s mu-law goes to the model and back as it is (audio/pcmu both ways: no decoding or resampling on the frame path). The model hears the turn end itself (500 ms of silence) and its first audio comes 300 ms later; the floor is that time measured through the adapter in the same run, the latency the platform adds the rest of the way to the Twilio socket.'
      : 'One 2-core machine runs the platform, the far end (fake Twilio with its callers; the STT, LLM and TTS fakes: two worker threads) and the database. ' +
      'The caller\'s words go to STT at a 250 ms pause (STT_EARLY_TRANSCRIPT_MS), half-way through the 500 ms of silence that ends the turn, so the 80 ms STT round trip is over before the turn ends (stt_ms: the wait after it, 0 here) and the turn latency falls below the sequential floor. ' +
      'With BENCH_EARLY_TRANSCRIPT_MS=0 (STT asked at the turn\'s end, as the floor assumes), 50 calls: p95 729 ms with spread arrivals (+33 ms over the floor), 767 ms in lockstep (+64 ms): what is left is queueing on the shared cores while 50 turns end together (every stage 10-45 ms above its p50, both event loops at p99 ~20 ms), not one slow step.',
  };
  fs.mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(import.meta.dirname, 'results', `${RESULTS_NAME}${tracingSuffix()}.json`), `${JSON.stringify(summary, null, 2)}\n`);
}

await main();
