import type { TextToSpeech } from '../../ports/tts.ts';
import { type After, type AgentTurn, type Heard, NOTHING_HEARD, newAgentTurn, type SpokenSentence } from '../agent-turn.ts';
import { framesOf } from '../speaker.ts';
import type { TranscriptEntry } from '../outcome.ts';
import { playedWords, splitSentences } from '../sentence-stream.ts';
import type { TurnTrace } from '../tracing.ts';
import type { CallShell, CallSignal } from './call-pipeline.ts';

// The cascade's speech stage: the agent's turn as sentences → TTS → the shell's speaker. It owns
// the turn being said; when the reply is generated and played out, its transcript entry is written
// and the shell is told what follows. Barge-in keeps the words that were heard; a machine, a
// transfer or the end stop the turn.

export interface SpeechStageDeps {
  tts: TextToSpeech;
  /** A new agent turn's trace (`agent`: a fixed text that answers nobody). */
  traceAgentTurn(): TurnTrace;
}

/** The turn's words as its transcript entry; an answer to the caller's turn carries its latency and timings. */
function agentEntry(shell: CallShell, current: AgentTurn, text: string, startAt: number, interrupted?: true): TranscriptEntry {
  const entry: TranscriptEntry = { role: 'agent', text, start_ms: shell.since(startAt), end_ms: shell.since(shell.clock.now()) };
  if (interrupted) entry.interrupted = true;
  if (current.turnEndAt !== null && current.firstFrameAt !== null) {
    entry.latency_ms = Math.round(current.firstFrameAt - current.turnEndAt);
    if (current.timings) entry.timings = current.timings;
  }
  return entry;
}

/** The turn's first audio from TTS: its timing, and the time its first frame is written (the latency mark). */
function firstAudio(shell: CallShell, current: AgentTurn, askedAt: number) {
  const now = shell.clock.now();
  if (current.timings && current.timings.tts_first_audio_ms === 0) current.timings.tts_first_audio_ms = Math.round(now - askedAt);
  current.trace.first('tts.first_audio', askedAt, now);
  if (current.firstFrameAt !== null) return;
  void shell.speaker.nextFrame().then((at) => {
    current.trace.firstFrame(at);
    if (current.firstFrameAt === null) current.firstFrameAt = at;
  });
}

/** Synthesises the turn's pending sentences one after another, queueing their audio, while `live()`. */
async function synthesizePending(shell: CallShell, tts: TextToSpeech, current: AgentTurn, live: () => boolean) {
  try {
    while (current.pending.length > 0 && live()) {
      const sentence = current.pending.shift() as string;
      const askedAt = shell.clock.now();
      const spoken: SpokenSentence = { text: sentence, segments: [] };
      for await (const pcm of tts.synthesize(sentence, shell.agent.voice, { signal: current.controller.signal })) {
        if (!live()) return;
        firstAudio(shell, current, askedAt);
        const segment = shell.speaker.enqueue(pcm);
        if (!segment) return shell.overflow('the agent reply exceeded the audio bound');
        if (spoken.segments.push(segment) === 1) current.sentences.push(spoken);
      }
    }
  } catch (error) {
    if (!live()) return;
    shell.observer.error('tts_failed', error instanceof Error ? error.message : String(error));
    current.trace.fail('tts_failed');
    // The voice failed: the sentences after it go unsaid, and the turn ends with what was said.
    current.pending.length = 0;
  }
}

/** The words of the turn the caller heard before cutting it: of each sentence, the share of its audio played. */
const heardWords = (current: AgentTurn) =>
  current.sentences
    .map((s) => {
      const { played, frames } = framesOf(s.segments);
      return playedWords(s.text, played, frames);
    })
    .filter(Boolean)
    .join(' ')
    .trim();

export function speechStage(shell: CallShell, deps: SpeechStageDeps) {
  const { clock, speaker } = shell;
  let turn: AgentTurn | null = null;

  /** Synthesises the turn's pending sentences; once the reply is generated and all are queued, the turn completes. */
  async function synthesize(current: AgentTurn) {
    if (current.synthesizing) return;
    current.synthesizing = true;
    try {
      await synthesizePending(shell, deps.tts, current, () => turn === current && !shell.ended);
    } finally {
      current.synthesizing = false;
    }
    if (turn !== current) return;
    // A sentence that came while the last synthesis was finishing is said too.
    if (current.pending.length > 0) return void synthesize(current);
    if (current.generated) void completeTurn(current);
  }

  /** Once the reply is generated, synthesised and played out: the transcript entry, then what follows. */
  async function completeTurn(current: AgentTurn) {
    await speaker.idle();
    if (turn !== current || shell.ended) return;
    turn = null;
    current.trace.end(clock.now(), current.turnEndAt !== null && current.firstFrameAt !== null ? { latency_ms: Math.round(current.firstFrameAt - current.turnEndAt) } : undefined);
    const text = current.sentences.map((s) => s.text).join(' ').trim();
    if (text) {
      shell.record(agentEntry(shell, current, text, current.firstFrameAt ?? clock.now()));
      shell.media.stream.mark(`agent-turn-${shell.transcript.length}`);
    }
    await shell.proceed(current.after);
  }

  /** The caller spoke over the agent: stop, drop what was not heard, keep what was. */
  function interrupted() {
    const current = turn;
    if (!current) return;
    turn = null;
    current.trace.end(clock.now(), { interrupted: true });
    current.controller.abort();
    speaker.clear();
    shell.media.stream.clear();
    const heard = heardWords(current);
    if (heard && current.firstFrameAt !== null) shell.record(agentEntry(shell, current, heard, current.firstFrameAt, true));
  }

  return {
    /** The agent's turn being generated or said, if any. */
    get current(): AgentTurn | null {
      return turn;
    },
    /** A new turn answering the caller's turn that ended at `turnEndAt`; it replaces any other. */
    begin(turnEndAt: number, heard: Heard, trace: TurnTrace): AgentTurn {
      turn = newAgentTurn(turnEndAt, heard, trace);
      return turn;
    },
    /** One sentence of the reply, synthesised after those before it. */
    sentence(current: AgentTurn, sentence: string) {
      current.pending.push(sentence);
      void synthesize(current);
    },
    /** The reply is complete: once its sentences are said, the turn is over. */
    generated(current: AgentTurn) {
      current.generated = true;
      if (!current.synthesizing) void synthesize(current);
    },
    /** A fixed text (greeting, prompt, voicemail message) as an agent turn that answers nobody. */
    say(text: string, after: After | null) {
      turn = { ...newAgentTurn(null, NOTHING_HEARD, deps.traceAgentTurn()), after, pending: splitSentences(text), generated: true };
      void synthesize(turn);
    },
    signal(s: CallSignal) {
      if (s.type === 'barge_in') return interrupted();
      // A machine answered, a transfer, the end: the turn stops unheard.
      turn?.trace.end(clock.now(), { interrupted: true });
      turn?.controller.abort();
      turn = null;
    },
  };
}

export type SpeechStage = ReturnType<typeof speechStage>;
