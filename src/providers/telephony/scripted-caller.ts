import { concatPcm, FRAME_MS, FRAME_SAMPLES } from '../../platform/audio/frames.ts';
import type { FarEnd } from './media-pair.ts';
import { held, type RuntimeClock, type RuntimeTimer } from '../../ports/clock.ts';
import type { SpeechToText } from '../../ports/stt.ts';
import type { CallerUtterance } from '../../ports/telephony.ts';
import type { TextToSpeech } from '../../ports/tts.ts';

// A simulated caller on the far end of a media pair: it listens to the agent (frames, marks,
// clears), speaks its script as synthesised audio paced by the clock, and sends silence in
// between, as a phone line does. What it says is also queued for the pass-through recogniser, so
// the runtime hears it through the same path as real speech: VAD, end of turn, STT, barge-in.

/** Pause between the end of the agent's turn and the caller's answer. */
export const CALLER_THINK_MS = 300;

export interface ScriptedCallerOptions {
  clock: RuntimeClock;
  far: FarEnd;
  tts: TextToSpeech;
  voice: string;
  script: CallerUtterance[];
  /** Said when the call connects, before the agent (an answering machine's greeting). */
  opening?: string;
  /** After this many agent turns have been played, hang up / fail the media (sandbox magic numbers). */
  hangUpAfterAgentTurns?: number;
  failAfterAgentTurns?: number;
}

/** The recogniser of a simulated call: the text of each utterance, in the order they were said. */
export function createPassThroughStt() {
  const said: string[] = [];
  const stt: SpeechToText & { push(text: string): void } = {
    push: (text) => void said.push(text),
    async transcribe() {
      return said.shift() ?? '';
    },
  };
  return stt;
}

export function createScriptedCaller(options: ScriptedCallerOptions, stt: { push(text: string): void }) {
  const { clock, far } = options;
  const script = [...options.script];
  const silence = new Int16Array(FRAME_SAMPLES);
  let speech: Int16Array | null = null;
  let speechOffset = 0;
  let nextDue = clock.now();
  let ticker: RuntimeTimer | null = null;
  let interruptTimer: RuntimeTimer | null = null;
  let agentTalking = false;
  let agentTurns = 0;
  let stopped = false;
  let speaking: Promise<void> = Promise.resolve();

  // A person's lines are ready when they speak: the whole script is synthesised from the start, held
  // on the clock (a virtual clock stands still meanwhile), so the caller never falls silent for the
  // time its synthesis takes, whatever the machine's load.
  const rendered = new Map<string, Promise<Int16Array>>();
  function render(text: string): Promise<Int16Array> {
    let audio = rendered.get(text);
    if (!audio) {
      audio = held(
        clock,
        (async () => {
          const parts: Int16Array[] = [];
          for await (const pcm of options.tts.synthesize(text, options.voice)) parts.push(pcm);
          // A copy even of a single piece: the line is kept, the synthesiser's buffer is not ours.
          return parts.length === 1 ? parts[0].slice() : concatPcm(parts);
        })(),
      );
      rendered.set(text, audio);
    }
    return audio;
  }
  for (const line of [...(options.opening ? [options.opening] : []), ...script]) {
    // A failure surfaces when the line is said.
    render(typeof line === 'string' ? line : line.text).catch(() => undefined);
  }

  /** Starts sending `text` (synthesised ahead); the text goes to the recogniser. */
  function say(text: string) {
    speaking = speaking.then(async () => {
      const audio = await render(text);
      if (stopped) return;
      stt.push(text);
      speech = audio;
      speechOffset = 0;
    });
  }

  function sayNextAfterTurn() {
    const next = script[0];
    if (next === undefined) return;
    script.shift();
    const text = typeof next === 'string' ? next : next.text;
    const timer = clock.setTimer(() => say(text), CALLER_THINK_MS);
    void timer;
  }

  function onAgentTurnStart() {
    const next = script[0];
    if (next === undefined || typeof next === 'string') return;
    interruptTimer = clock.setTimer(() => {
      interruptTimer = null;
      if (script[0] !== next) return;
      script.shift();
      say(next.text);
    }, next.interrupt_after_ms);
  }

  function onAgentTurnEnd() {
    agentTalking = false;
    interruptTimer?.cancel();
    interruptTimer = null;
    agentTurns++;
    if (options.hangUpAfterAgentTurns !== undefined && agentTurns >= options.hangUpAfterAgentTurns) {
      return clock.setTimer(() => far.hangUp(), CALLER_THINK_MS);
    }
    if (options.failAfterAgentTurns !== undefined && agentTurns >= options.failAfterAgentTurns) {
      return clock.setTimer(() => far.fail('the media stream closed unexpectedly'), CALLER_THINK_MS);
    }
    // An interruption planned for a turn shorter than its delay is simply said after it.
    sayNextAfterTurn();
  }

  // Caller audio: speech while there is some, silence otherwise, one frame per 20 ms of the clock.
  function tick() {
    ticker = null;
    if (stopped || far.closed) return;
    const now = clock.now();
    while (nextDue <= now) {
      let frame: Int16Array = silence;
      if (speech) {
        // A view of the rendered speech (no copy), but for the last, padded frame.
        frame = speech.subarray(speechOffset, speechOffset + FRAME_SAMPLES);
        if (frame.length < FRAME_SAMPLES) {
          const padded = new Int16Array(FRAME_SAMPLES);
          padded.set(frame);
          frame = padded;
        }
        speechOffset += FRAME_SAMPLES;
        if (speechOffset >= speech.length) speech = null;
      }
      far.sendFrame(frame);
      nextDue += FRAME_MS;
      if (stopped || far.closed) return;
    }
    ticker = clock.setTimer(tick, nextDue - now);
  }

  far.onAgentFrame(() => {
    if (agentTalking) return;
    agentTalking = true;
    onAgentTurnStart();
  });
  far.onMark(() => onAgentTurnEnd());
  far.onClear(() => {
    // Barge-in: the agent stopped; the caller is already saying its line.
    agentTalking = false;
  });
  far.onClosed(() => stop());

  function stop() {
    stopped = true;
    ticker?.cancel();
    interruptTimer?.cancel();
  }

  return {
    start() {
      nextDue = clock.now();
      if (options.opening) say(options.opening);
      tick();
    },
    stop,
  };
}
