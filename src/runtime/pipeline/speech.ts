import type { TextToSpeech } from '../../ports/tts.ts';
import { type After, type AgentTurn, type Heard, NOTHING_HEARD, newAgentTurn } from '../agent-turn.ts';
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

export function speechStage(shell: CallShell, deps: SpeechStageDeps) {
  const { clock, agent, speaker, since } = shell;
  const { stream } = shell.media;
  let turn: AgentTurn | null = null;

  /** Synthesises the turn's pending sentences one after another, queueing their audio. */
  async function synthesize(current: AgentTurn) {
    if (current.synthesizing) return;
    current.synthesizing = true;
    try {
      while (current.pending.length > 0 && turn === current && !shell.ended) {
        const sentence = current.pending.shift() as string;
        const askedAt = clock.now();
        for await (const pcm of deps.tts.synthesize(sentence, agent.voice, { signal: current.controller.signal })) {
          if (turn !== current || shell.ended) return;
          if (current.timings && current.timings.tts_first_audio_ms === 0) current.timings.tts_first_audio_ms = Math.round(clock.now() - askedAt);
          current.trace.first('tts.first_audio', askedAt, clock.now());
          if (current.firstFrameAt === null) {
            void speaker.nextFrame().then((at) => {
              current.trace.firstFrame(at);
              if (current.firstFrameAt === null) current.firstFrameAt = at;
            });
          }
          const segment = speaker.enqueue(sentence, pcm);
          if (!segment) return shell.overflow('the agent reply exceeded the audio bound');
          current.segments.push(segment);
        }
      }
    } catch (error) {
      if (turn === current && !shell.ended) shell.observer.error('tts_failed', error instanceof Error ? error.message : String(error));
      if (turn === current && !shell.ended) current.trace.fail('tts_failed');
    } finally {
      current.synthesizing = false;
    }
    if (turn === current && current.generated && current.pending.length === 0) void completeTurn(current);
  }

  /** Once the reply is generated, synthesised and played out: the transcript entry, then what follows. */
  async function completeTurn(current: AgentTurn) {
    await speaker.idle();
    if (turn !== current || shell.ended) return;
    turn = null;
    current.trace.end(clock.now(), current.turnEndAt !== null && current.firstFrameAt !== null ? { latency_ms: Math.round(current.firstFrameAt - current.turnEndAt) } : undefined);
    const text = current.segments.map((s) => s.text).join(' ').trim();
    if (text) {
      const start = current.firstFrameAt ?? clock.now();
      const entry: TranscriptEntry = { role: 'agent', text, start_ms: since(start), end_ms: since(clock.now()) };
      if (current.turnEndAt !== null && current.firstFrameAt !== null) {
        entry.latency_ms = Math.round(current.firstFrameAt - current.turnEndAt);
        if (current.timings) entry.timings = current.timings;
      }
      shell.record(entry);
      stream.mark(`agent-turn-${shell.transcript.length}`);
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
    stream.clear();
    const heard = current.segments
      .map((s) => playedWords(s.text, s.played, s.frames))
      .filter(Boolean)
      .join(' ')
      .trim();
    if (!heard || current.firstFrameAt === null) return;
    const entry: TranscriptEntry = { role: 'agent', text: heard, start_ms: since(current.firstFrameAt), end_ms: since(clock.now()), interrupted: true };
    if (current.turnEndAt !== null) {
      entry.latency_ms = Math.round(current.firstFrameAt - current.turnEndAt);
      if (current.timings) entry.timings = current.timings;
    }
    shell.record(entry);
  }

  /** The turn stops unheard (a machine answered, a transfer, the end). */
  function stop() {
    turn?.trace.end(clock.now(), { interrupted: true });
    turn?.controller.abort();
    turn = null;
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
      const current = newAgentTurn(null, NOTHING_HEARD, deps.traceAgentTurn());
      turn = current;
      current.after = after;
      current.pending.push(...splitSentences(text));
      current.generated = true;
      void synthesize(current);
    },
    signal(s: CallSignal) {
      if (s.type === 'barge_in') interrupted();
      else stop();
    },
  };
}

export type SpeechStage = ReturnType<typeof speechStage>;
