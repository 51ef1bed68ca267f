import { bistroAgent } from '../../../test/support/bistro-agent.ts';
import type { AgentToolbox, DialogueEngine, EngineAction } from '../../engine/types.ts';
import { FRAME_SAMPLES } from '../../platform/audio/frames.ts';
import type { MediaStream } from '../../ports/media.ts';
import type { SpeechModelEvent, SpeechModelSession, SpeechModelSessionOptions } from '../../ports/speech-model.ts';
import type { CallMedia } from '../../ports/telephony.ts';
import type { TextToSpeech } from '../../ports/tts.ts';
import type { CallAgent } from '../call-agent.ts';
import { countingStream, manualClock, settle, stepTo } from '../test-helpers.ts';
import { NO_TRACE, type TraceSpan, turnTrace } from '../tracing.ts';
import { type CallSignal, createCallPipeline } from './call-pipeline.ts';
import { modelCaller } from './model-caller.ts';
import { modelSpeech } from './model-speech.ts';
import { modelStages } from './model-stages.ts';
import { type SpeechStage, speechStage } from './speech.ts';

/**
 * A speech-to-speech call's caller and speech stages in the real call shell, on a clock moved by
 * hand from 5 s (its media μ-law with `mulaw`), the model's events fed by the test: what the stream was sent, the shell's
 * signals, the caller's words heard, what the model was told of a cut, the responses spoken.
 */
export function modelRig(agent: Partial<CallAgent> = {}, options: { mulaw?: boolean } = {}) {
  const clock = manualClock();
  clock.advanceTo(5000);
  const { stream, played } = countingStream(options);
  const log = Object.assign(played, { signals: [] as CallSignal[], heard: [] as string[], interrupts: [] as Array<{ itemId: string; audioMs: number } | undefined>, spoken: 0 });
  const media: CallMedia = { stream, answeredBy: 'human', transfer: async () => undefined, hangup: async () => undefined };
  let speaking = false;
  const pipeline = createCallPipeline({ clock, media, codec: options.mulaw ? 'mulaw' : 'pcm16', agent: bistroAgent({ max_duration_seconds: 600, barge_in_min_ms: 200, ...agent }), observer: { transcript: () => undefined, transfer: () => undefined, error: () => undefined } }, () => ({
    stages: [{ signal: (s) => void log.signals.push(s) }],
    start: () => undefined,
    say: () => undefined,
    typed: () => undefined,
    busy: () => false,
  }));
  const outcome = pipeline.run();
  const shell = pipeline.shell;
  const caller = modelCaller(shell, { agentSpeaking: () => speaking, heard: (text) => void log.heard.push(text) });
  const speech = modelSpeech(shell, {
    interrupt: (heard) => void log.interrupts.push(heard),
    spoken: async () => void log.spoken++,
  });
  return {
    clock,
    log,
    shell,
    pipeline,
    outcome,
    caller,
    speech,
    setSpeaking(value: boolean) {
      speaking = value;
    },
  };
}

/** `count` whole frames and `extra` samples of PCM, every sample `value`. */
export const frames = (count: number, extra = 0, value = 300) => new Int16Array(FRAME_SAMPLES * count + extra).fill(value);

interface RigOptions {
  agent?: Partial<CallAgent>;
  answeredBy?: 'human' | 'machine';
  openFails?: boolean;
  /** The session opens only when the test calls `open()`. */
  openLater?: boolean;
  /** What sendAudio answers (false: the link is over its bound). */
  accepts?: boolean;
  mulaw?: boolean;
  /** Tools run: the actions each adds. */
  tools?: Record<string, EngineAction[]>;
}

/**
 * The speech-to-speech stages on the real call shell, the speech model and the agent's tools
 * stubbed, on a clock moved by hand from 1 s: what the model was opened with, asked, sent and told.
 */
export function stagesRig(options: RigOptions = {}) {
  const clock = manualClock();
  clock.advanceTo(1000);
  const log = {
    opened: [] as SpeechModelSessionOptions[],
    asked: [] as Array<string | undefined>,
    texts: [] as string[],
    results: [] as Array<[string, string]>,
    interrupts: [] as Array<{ itemId: string; audioMs: number } | undefined>,
    audio: [] as string[],
    closes: 0,
    errors: [] as Array<[string, string]>,
    hangups: [] as string[],
    transfers: [] as string[],
    ran: [] as Array<[string, string]>,
  };
  let emit: (event: SpeechModelEvent) => void = () => undefined;
  let open: () => void = () => undefined;
  const opening = new Promise<void>((resolve) => {
    open = resolve;
  });
  const session: SpeechModelSession = {
    onEvent: (listener) => {
      emit = listener;
    },
    sendAudio: (pcm) => {
      log.audio.push(`pcm${pcm.length}`);
      return options.accepts ?? true;
    },
    sendMulaw: (mulaw) => {
      log.audio.push(`mulaw${mulaw.length}`);
      return options.accepts ?? true;
    },
    respond: (instructions) => void log.asked.push(instructions),
    sendText: (text) => void log.texts.push(text),
    functionResult: (callId, output) => void log.results.push([callId, output]),
    interrupt: (heard) => void log.interrupts.push(heard),
    close: () => void log.closes++,
  };
  const toolbox: AgentToolbox = {
    specs: [{ name: 'end_call', description: 'ends', parameters: {} }],
    instructions: 'You are Ada.',
    actions: [],
    ended: () => false,
    run: async (name, rawArgs) => {
      log.ran.push([name, rawArgs]);
      toolbox.actions.push(...(options.tools?.[name] ?? []));
      return { output: `${name} done`, terminal: false };
    },
  };
  const engine = { toolsFor: () => toolbox, greet: (agent: CallAgent) => ({ role: 'agent', text: `Hello, ${agent.name} here.` }) } as unknown as DialogueEngine;
  let frame: (frame: Int16Array) => void = () => undefined;
  let mulaw: (mulaw: Uint8Array) => void = () => undefined;
  const listen = (listener: (m: Uint8Array) => void) => {
    mulaw = listener;
  };
  let text: (line: string) => void = () => undefined;
  const stream: MediaStream = {
    onFrame: (l) => {
      frame = l;
    },
    onText: (l) => {
      text = l;
    },
    onMark: () => undefined,
    onClose: () => undefined,
    send: () => true,
    mark: () => undefined,
    clear: () => undefined,
    close: () => undefined,
    ...(options.mulaw ? { mulaw: { onAudio: (l: (m: Uint8Array) => void) => void listen(l), send: () => void log.audio.push('agent-mulaw') === undefined } } : {}),
  };
  const media: CallMedia = {
    stream,
    answeredBy: options.answeredBy ?? 'human',
    transfer: async (to) => void log.transfers.push(to),
    hangup: async (reason) => void log.hangups.push(String(reason)),
  };
  const agent = bistroAgent({ max_duration_seconds: 600, voice: 'alloy', language: 'fr', turn_end_silence_ms: 700, end_call_phrases: ['goodbye', ' '], ...options.agent });
  const pipeline = createCallPipeline(
    { clock, media, agent, codec: options.mulaw ? 'mulaw' : 'pcm16', observer: { transcript: () => undefined, transfer: () => undefined, error: (code, message) => void log.errors.push([code, message]) } },
    (shell) =>
      modelStages(shell, {
        model: {
          name: 'stub',
          open: async (opened) => {
            log.opened.push(opened);
            if (options.openFails) throw new Error('connection refused');
            if (options.openLater) await opening;
            return session;
          },
        },
        engine,
        workspaceId: 'ws_model',
        variables: {},
        today: new Date('2026-11-30T12:00:00Z'),
      }),
  );
  const outcome = pipeline.run();
  return {
    clock,
    log,
    pipeline,
    outcome,
    emit: (event: SpeechModelEvent) => emit(event),
    frame: (f: Int16Array) => frame(f),
    mulaw: (m: Uint8Array) => mulaw(m),
    typed: (line: string) => text(line),
    toolbox,
    open,
  };
}


/** A response `id` of one frame with `words`, generated. */
export function respond(rig: ReturnType<typeof stagesRig>, id: string, words: string) {
  rig.emit({ type: 'response_started', responseId: id });
  rig.emit({ type: 'audio', responseId: id, itemId: `item-${id}`, pcm: new Int16Array(FRAME_SAMPLES).fill(200) });
  rig.emit({ type: 'agent_transcript', responseId: id, itemId: `item-${id}`, text: words, final: true });
}

export const done = (id: string, status: Extract<SpeechModelEvent, { type: 'response_done' }>['status'] = 'completed') => ({ type: 'response_done', responseId: id, status, outputTokens: 1, inputTokens: 1 }) as const;

/** Response r1 calls the tool `name`; once its result is back, r2 answers: both generated. */
export async function answerAfterTool(rig: ReturnType<typeof stagesRig>, name: string, args = '{}') {
  respond(rig, 'r1', 'One moment.');
  rig.emit({ type: 'function_call', responseId: 'r1', callId: 'c1', name, arguments: args });
  await settle();
  rig.emit(done('r1'));
  respond(rig, 'r2', 'Here you are.');
  rig.emit(done('r2'));
}

/** Plays `ms` more of the call (the agent's audio, its timers). */
export const playOut = (rig: ReturnType<typeof stagesRig>, ms = 200) => stepTo(rig.clock, rig.clock.now() + ms);

/** The speech rig's voice: five frames (100 ms) of audio a word. */
export const WORD_FRAMES = 5;

export interface SpeechRigOptions {
  /** The voice fails on a sentence holding this text. */
  failOn?: string;
  /** Clock time the voice takes before each word's audio. */
  delayMs?: number;
  /** The voice goes on after its request was aborted (its audio comes all the same). */
  ignoresAbort?: boolean;
  /** The turns' spans: each agent turn (a fixed text) is traced under it. */
  trace?: TraceSpan;
}

/**
 * The cascade's speech stage in the real call shell, on a clock moved by hand, with a voice whose
 * audio is five frames a word: what was synthesised in which voice, what the stream was sent, the
 * errors told; `busy` at its most, the synthesis requests at once.
 */
export function speechRig(options: SpeechRigOptions = {}) {
  const clock = manualClock();
  const { stream, played } = countingStream();
  const log = Object.assign(played, { synthesized: [] as Array<[string, string]>, errors: [] as Array<[string, string]>, hangups: [] as string[], signals: [] as Array<AbortSignal | undefined>, inFlight: 0, mostInFlight: 0 });
  const media: CallMedia = { stream, answeredBy: 'human', transfer: async () => undefined, hangup: async (reason) => void log.hangups.push(String(reason)) };
  const tts: TextToSpeech = {
    async *synthesize(text, voice, synthOptions) {
      log.synthesized.push([text, voice]);
      log.signals.push(synthOptions?.signal);
      log.mostInFlight = Math.max(log.mostInFlight, ++log.inFlight);
      try {
        const words = text.split(/\s+/).filter(Boolean).length;
        for (let i = 0; i < words; i++) {
          if (options.delayMs) await new Promise((resolve) => clock.setTimer(() => resolve(undefined), options.delayMs as number));
          if (options.failOn && text.includes(options.failOn)) throw new Error('voice service down');
          if (synthOptions?.signal?.aborted && !options.ignoresAbort) return;
          yield new Int16Array(FRAME_SAMPLES * WORD_FRAMES).fill(500);
        }
      } finally {
        log.inFlight--;
      }
    },
  };
  let stage!: SpeechStage;
  const pipeline = createCallPipeline(
    { clock, media, agent: bistroAgent({ voice: 'builtin-ava', max_duration_seconds: 600 }), observer: { transcript: () => undefined, transfer: () => undefined, error: (code, message) => void log.errors.push([code, message]) } },
    (shell) => {
      stage = speechStage(shell, { tts, traceAgentTurn: () => turnTrace(options.trace ?? NO_TRACE, 1, clock.now(), 'agent') });
      return { stages: [stage], start: () => undefined, say: (text, after) => stage.say(text, after), typed: () => undefined, busy: () => stage.current !== null };
    },
  );
  const outcome = pipeline.run();
  const playTo = (ms: number) => stepTo(clock, ms);
  return { clock, log, pipeline, outcome, playTo, stage: () => stage, shell: () => pipeline.shell };
}
