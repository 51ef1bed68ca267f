// The far end of the voice benchmark, in worker threads of its own (as Twilio, the caller and the
// speech and model providers are other machines in a real deployment, their work must not share
// the platform's event loop): one thread for a fake Twilio with the callers, one for the STT, LLM
// and TTS fakes at a realistic pace. Driven by messages from bench/voice.bench.ts.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { startFakeOpenAi } from '../../test/fakes/openai/llm.ts';
import { startFakeSttServer } from '../../test/fakes/openai/stt.ts';
import { startFakeRealtimeServer } from '../../test/fakes/openai-realtime/server.ts';
import { startFakeTwilio } from '../../test/fakes/twilio/index.ts';
import type { FakeCall } from '../../test/fakes/twilio/types.ts';
import { createTtsRegistry } from '../../src/providers/tts/index.ts';
import { startFakeSpeechServer } from '../../test/fakes/openai/tts.ts';
import { createRuntimeSpeech } from '../../src/providers/tts/runtime-speech.ts';

export interface FarEndSettings {
  /** `models`: the STT, LLM and TTS fakes; `callers`: the fake Twilio and its callers. */
  role: 'models' | 'callers';
  port: number;
  accountSid: string;
  authToken: string;
  publicBaseUrl: string;
  pace: { sttMs: number; llmFirstTokenMs: number; tokensPerSecond: number; ttsFirstAudioMs: number; realtimeFirstAudioMs: number };
  question: string;
  replies: number;
  /** BENCH_STT=streaming: the Realtime fake also transcribes (it hears the question, after `pace.sttMs`). */
  streaming: boolean;
}

export type FarEndRequest = { type: 'level'; calls: number; turns: number; to: string; arrivalMs: number } | { type: 'close' };

const settings = workerData as FarEndSettings;
const port = parentPort;
if (!port) throw new Error('voice-far-end runs as a worker thread');

// The models and the callers each have a thread: in a deployment they are other machines, and
// 50 callers' media must not delay the model fakes' timers (nor the reverse).
if (settings.role === 'models') await serveModels(port);
else await serveCallers(port);

async function serveModels(port: MessagePort) {
  // Each reply's first sentence is new (the runtime caches repeated lines; a real model rarely repeats).
  let replies = 0;
  const nextReply = () =>
    `We open at nine tomorrow, guest ${String(replies++).padStart(4, '0')}. Our kitchen serves until ten in the evening, and you can book a table online or by phone.`;
  const stt = await startFakeSttServer({ delayMs: settings.pace.sttMs });
  const llm = await startFakeOpenAi({ pace: { firstTokenMs: settings.pace.llmFirstTokenMs, tokensPerSecond: settings.pace.tokensPerSecond } });
  // Speech streamed in pieces faster than it plays, the first after the model's time to first audio.
  const tts = await startFakeSpeechServer({ stream: { chunks: 12, delayMs: 40, firstDelayMs: settings.pace.ttsFirstAudioMs } });
  for (let i = 0; i < settings.replies; i++) llm.reply(() => ({ content: nextReply() }));
  // A speech-to-speech model: it hears the caller's turn end by itself and answers after its own
  // time to first audio, streaming the audio faster than it plays (100 ms chunks every 20 ms).
  const realtime = await startFakeRealtimeServer({
    apiKey: 'bench',
    timing: { firstAudioDelayMs: settings.pace.realtimeFirstAudioMs, audioChunkIntervalMs: 20, msPerWord: 250, transcriptionDelayMs: settings.pace.sttMs },
    fallback: ({ instructions }) => ({ text: instructions ? (/"(.*)"$/.exec(instructions)?.[1] ?? '') : nextReply() }),
  });
  stt.say(...Array.from({ length: settings.replies }, () => settings.question));
  if (settings.streaming) realtime.hear(...Array.from({ length: settings.replies }, () => settings.question));
  const loop = monitorEventLoopDelay({ resolution: 10 });
  port.on('message', async (request: FarEndRequest | { type: 'loop' }) => {
    if (request.type === 'close') {
      await Promise.all([stt.close(), llm.close(), tts.close(), realtime.close()]);
      port.postMessage({ type: 'closed' });
    } else if (request.type === 'loop') {
      // The models' own event-loop delay since the last question: their lateness is not the platform's.
      port.postMessage({ type: 'loop', loopP99Ms: Math.round(loop.percentile(99) / 1e5) / 10, loopMaxMs: Math.round(loop.max / 1e5) / 10 });
      loop.reset();
    }
  });
  loop.enable();
  port.postMessage({ type: 'ready', stt: stt.baseUrl, llm: llm.url, tts: tts.baseUrl, realtime: realtime.url });
}

async function serveCallers(port: MessagePort) {
  const twilio = await startFakeTwilio({
    accountSid: settings.accountSid,
    authToken: settings.authToken,
    proxy: { publicBaseUrl: settings.publicBaseUrl, localBaseUrl: `http://127.0.0.1:${settings.port}` },
  });
  const chunks: Int16Array[] = [];
  for await (const chunk of createRuntimeSpeech(createTtsRegistry()).synthesize(settings.question, 'builtin-ben')) chunks.push(chunk);
  const question = Int16Array.from(chunks.flatMap((c) => Array.from(c)));

  async function converse(call: FakeCall, turns: number) {
    await call.streamStarted;
    await call.waitForAgentAudio(30_000);
    await call.waitForAgentQuiet(400, 60_000);
    for (let turn = 0; turn < turns; turn++) {
      await call.say(question);
      await call.silence(700);
      await call.waitForAgentAudio(30_000);
      await call.waitForAgentQuiet(400, 60_000);
    }
    await call.hangUp();
  }

  port.on('message', async (request: FarEndRequest) => {
    if (request.type === 'close') {
      await twilio.close();
      port.postMessage({ type: 'closed' });
      return;
    }
    // The callers' own event-loop delay: its lateness is not the platform's.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const conversations: Array<Promise<void>> = [];
    for (let i = 0; i < request.calls; i++) {
      const call = await twilio.placeInboundCall({ from: `+1415555${String(1000 + i).padStart(4, '0')}`, to: request.to });
      // Each caller starts talking as soon as its call is up, so calls keep the phase they arrived
      // with (every arrivalMs), rather than all starting together once the last one has arrived.
      conversations.push(converse(call, request.turns));
      await new Promise((resolve) => setTimeout(resolve, request.arrivalMs));
    }
    const results = await Promise.allSettled(conversations);
    const failures = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
    loop.disable();
    port.postMessage({ type: 'level-done', failures, loopP99Ms: Math.round(loop.percentile(99) / 1e5) / 10, loopMaxMs: Math.round(loop.max / 1e5) / 10 });
  });

  port.postMessage({ type: 'ready', twilio: twilio.baseUrl, questionSamples: question.length });
}
