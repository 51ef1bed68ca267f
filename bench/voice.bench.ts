// Voice latency of real phone calls through the whole platform (issue 15): inbound Twilio calls from
// a local fake Twilio (Media Streams over a real WebSocket, mu-law audio of synthesised speech,
// signed webhooks), heard by the OpenAI-compatible STT adapter, answered by the OpenAI-compatible
// LLM adapter and spoken by the streamed OpenAI-compatible TTS adapter, each against a local fake
// at a realistic pace: STT 80 ms, LLM first token 200 ms then 40 tokens/s, TTS first audio 150 ms.
// Measured per agent turn, by the call session: from the moment the VAD ends the caller's turn to
// the first agent frame written to the Twilio socket (`latency_ms`), p50/p95 at 1 and 50
// concurrent calls. The baseline, measured in the same run through the same SDKs and fakes, is the
// floor no pipeline can beat: STT round trip + the LLM's time until its first sentence is complete
// + TTS time to first audio. Goal: p95 ≤ baseline + 30 ms. PGlite in a temporary DATA_DIR.
//   node --import tsx bench/voice.bench.ts        (BENCH_LEVELS=1,50, BENCH_TURNS=3)
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { systemClock } from '../src/platform/clock.ts';
import { migrateToLatest, openDatabase } from '../src/platform/db/database.ts';
import { createLogger } from '../src/platform/logging.ts';
import { startFakeOpenAi } from '../src/providers/llm/fake-openai-server.ts';
import { startFakeSttServer } from '../src/providers/stt/fake-server.ts';
import { createOpenAiStt } from '../src/providers/stt/openai.ts';
import { startFakeTwilio } from '../src/providers/telephony/twilio-fake/index.ts';
import type { FakeCall } from '../src/providers/telephony/twilio-fake/types.ts';
import { createTtsRegistry } from '../src/providers/tts/index.ts';
import { startFakeSpeechServer } from '../src/providers/tts/fake-server.ts';
import { createOpenAiTts } from '../src/providers/tts/openai.ts';
import { createRuntimeSpeech } from '../src/providers/tts/runtime-speech.ts';

const LEVELS = (process.env.BENCH_LEVELS ?? '1,50').split(',').map(Number);
const TURNS = Number(process.env.BENCH_TURNS ?? 3);
const PACE = { sttMs: 80, llmFirstTokenMs: 200, tokensPerSecond: 40, ttsFirstAudioMs: 150 };
const GOAL_OVERHEAD_MS = 30;
const QUESTION = 'What time do you open tomorrow?';
const REPLY = 'We open at nine tomorrow. Our kitchen serves until ten in the evening, and you can book a table online or by phone.';
const ACCOUNT_SID = `AC${'be'.repeat(16)}`;
const AUTH_TOKEN = 'bench-twilio-auth-token';
const PUBLIC_BASE_URL = 'https://voice.bench.test';

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
};
const median = (values: number[]) => percentile(values, 50) as number;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startFakes(port: number) {
  const twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, proxy: { publicBaseUrl: PUBLIC_BASE_URL, localBaseUrl: `http://127.0.0.1:${port}` } });
  const stt = await startFakeSttServer({ delayMs: PACE.sttMs });
  const llm = await startFakeOpenAi({ pace: { firstTokenMs: PACE.llmFirstTokenMs, tokensPerSecond: PACE.tokensPerSecond } });
  // Speech streamed in pieces faster than it plays, the first after the model's time to first audio.
  const tts = await startFakeSpeechServer({ stream: { chunks: 12, delayMs: 40, firstDelayMs: PACE.ttsFirstAudioMs } });
  const answers = LEVELS.reduce((sum, n) => sum + n, 0) * (TURNS + 2) + 50;
  for (let i = 0; i < answers; i++) llm.reply({ content: REPLY });
  return { twilio, stt, llm, tts, close: () => Promise.all([twilio.close(), stt.close(), llm.close(), tts.close()]) };
}

/** The floor, through the same SDKs and fakes, one request at a time: what no pipeline can beat. */
async function measureBaseline(fakes: Awaited<ReturnType<typeof startFakes>>, question: Int16Array) {
  const stt = createOpenAiStt({ baseUrl: fakes.stt.baseUrl, model: 'whisper-1', timeoutMs: 5000 });
  const client = new OpenAI({ baseURL: fakes.llm.url, apiKey: 'bench' });
  const tts = createOpenAiTts({ baseUrl: fakes.tts.baseUrl, model: 'tts-1' });
  const firstSentence = REPLY.slice(0, REPLY.indexOf('.') + 1);
  const samples = { stt: [] as number[], llm: [] as number[], tts: [] as number[] };
  for (let i = 0; i < 5; i++) {
    fakes.stt.say(QUESTION);
    let started = performance.now();
    await stt.transcribe(question, { language: 'en-US' });
    samples.stt.push(performance.now() - started);

    started = performance.now();
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: QUESTION }] });
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      // Complete once the next word has begun: a sentence end is only known then.
      if (text.length > firstSentence.length && text.startsWith(firstSentence)) break;
    }
    samples.llm.push(performance.now() - started);

    started = performance.now();
    for await (const _ of tts.stream?.(firstSentence, 'openai-alloy') ?? []) break;
    samples.tts.push(performance.now() - started);
  }
  const figures = { stt_ms: Math.round(median(samples.stt)), llm_first_sentence_ms: Math.round(median(samples.llm)), tts_first_audio_ms: Math.round(median(samples.tts)) };
  return { ...figures, floor_ms: figures.stt_ms + figures.llm_first_sentence_ms + figures.tts_first_audio_ms };
}

async function converse(call: FakeCall, question: Int16Array) {
  await call.streamStarted;
  await call.waitForAgentAudio(30_000);
  await call.waitForAgentQuiet(400, 60_000);
  for (let turn = 0; turn < TURNS; turn++) {
    await call.say(question);
    await call.silence(700);
    await call.waitForAgentAudio(30_000);
    await call.waitForAgentQuiet(400, 60_000);
  }
  await call.hangUp();
}

async function main() {
  const port = await freePort();
  const fakes = await startFakes(port);
  const speech = createRuntimeSpeech(createTtsRegistry());
  const chunks: Int16Array[] = [];
  for await (const chunk of speech.synthesize(QUESTION, 'builtin-ben')) chunks.push(chunk);
  const question = Int16Array.from(chunks.flatMap((c) => Array.from(c)));
  const baseline = await measureBaseline(fakes, question);
  console.log(JSON.stringify({ baseline }));

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bench-voice-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    TELEPHONY_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    TWILIO_API_BASE_URL: fakes.twilio.baseUrl,
    PUBLIC_BASE_URL,
    STT_BASE_URL: fakes.stt.baseUrl,
    LLM_BASE_URL: fakes.llm.url,
    LLM_API_KEY: 'bench',
    TTS_BASE_URL: fakes.tts.baseUrl,
    ALLOW_PRIVATE_URLS: 'true',
    RATE_LIMIT_USER_PER_MIN: '1000000',
    MAX_CONCURRENT_CALLS: '1000',
    SIGNUP_CREDIT_USD: '100000',
    LOG_LEVEL: 'silent',
  });
  const database = await openDatabase({ pgliteDir: path.join(dataDir, 'pglite') });
  await migrateToLatest(database);
  const { app } = await buildApp({ config, database, clock: systemClock, jwtSecret: 'x'.repeat(40), logger: createLogger({ level: 'silent' }) });
  await app.listen({ port, host: '127.0.0.1' });
  const inject = (method: 'GET' | 'POST', url: string, token?: string, payload?: unknown) =>
    app.inject({ method, url, payload: payload as object, headers: token ? { authorization: `Bearer ${token}` } : {} });
  await inject('POST', '/v1/auth/register', undefined, { email: 'bench@example.com', password: 'bench password' });
  const token = (await inject('POST', '/v1/auth/login', undefined, { email: 'bench@example.com', password: 'bench password' })).json().access_token;
  const agent = (
    await inject('POST', '/v1/agents', token, { name: 'Ada', first_message: 'Hello, Ada here.', llm: { provider: 'openai', model: 'gpt-4o-mini' }, voice: 'openai-alloy', silence_timeout_seconds: 120 })
  ).json();
  const number = (await inject('GET', '/v1/phone-numbers/available?country=US', token)).json().data[0].number;
  const bought = (await inject('POST', '/v1/phone-numbers/buy', token, { number })).json();
  await inject('POST', `/v1/phone-numbers/${bought.id}/assign`, token, { agent_id: agent.id });

  const levels = [];
  for (const concurrent of LEVELS) {
    fakes.stt.say(...Array.from({ length: concurrent * (TURNS + 2) }, () => QUESTION));
    const since = new Date();
    const calls: FakeCall[] = [];
    for (let i = 0; i < concurrent; i++) {
      calls.push(await fakes.twilio.placeInboundCall({ from: `+1415555${String(1000 + i).padStart(4, '0')}`, to: number }));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const cpuStart = process.cpuUsage();
    const started = performance.now();
    await Promise.all(calls.map((call) => converse(call, question)));
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuStart);
    // The calls' own figures, once each has ended and been journaled.
    let rows: Array<{ transcript: unknown }> = [];
    for (let i = 0; i < 200; i++) {
      rows = await database.db.selectFrom('calls').select(['transcript', 'status']).where('created_at', '>=', since).where('status', 'not in', ['queued', 'ringing', 'in_progress']).execute();
      if (rows.length >= concurrent) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const turns = rows.flatMap((row) => (row.transcript as Array<{ latency_ms?: number; timings?: { stt_ms: number; llm_first_token_ms: number; tts_first_audio_ms: number } }>).filter((e) => typeof e.latency_ms === 'number'));
    const latencies = turns.map((e) => e.latency_ms as number);
    const level = {
      calls: concurrent,
      ended: rows.length,
      turns: latencies.length,
      latency_p50_ms: percentile(latencies, 50),
      latency_p95_ms: percentile(latencies, 95),
      overhead_p95_ms: (percentile(latencies, 95) ?? 0) - baseline.floor_ms,
      stt_p50_ms: percentile(turns.map((e) => e.timings?.stt_ms ?? 0), 50),
      llm_first_token_p50_ms: percentile(turns.map((e) => e.timings?.llm_first_token_ms ?? 0), 50),
      tts_first_audio_p50_ms: percentile(turns.map((e) => e.timings?.tts_first_audio_ms ?? 0), 50),
      cpu_percent: Math.round(((cpu.user + cpu.system) / 1e6 / seconds) * 100),
      meets_goal: (percentile(latencies, 95) ?? Number.POSITIVE_INFINITY) <= baseline.floor_ms + GOAL_OVERHEAD_MS,
    };
    console.log(JSON.stringify(level));
    levels.push(level);
  }
  await app.close();
  await database.close();
  await fakes.close();
  fs.rmSync(dataDir, { recursive: true, force: true });

  const summary = {
    benchmark: 'voice',
    machine: { cpus: os.cpus().length, node: process.version },
    pace: PACE,
    turns_per_call: TURNS,
    baseline,
    goal: `latency p95 ≤ baseline floor + ${GOAL_OVERHEAD_MS} ms`,
    levels,
  };
  fs.mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(import.meta.dirname, 'results', 'voice.json'), `${JSON.stringify(summary, null, 2)}\n`);
}

await main();
