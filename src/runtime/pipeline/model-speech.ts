import type { SpeechModelEvent } from '../../ports/speech-model.ts';
import type { TranscriptEntry } from '../outcome.ts';
import { playedWords } from '../sentence-stream.ts';
import { type AgentAudio, frameLength, framesOf, type SpokenSegment } from '../speaker.ts';
import type { CallShell } from './call-pipeline.ts';

// The speech stage of a speech-to-speech call: the model's responses, their audio in whole frames
// to the shell's speaker, their words into the transcript (with the latency from the caller's turn
// end to the first frame written). A barge-in keeps the words played and tells the model where it
// was cut. The audio is PCM16 16 kHz, or on a `mulaw` call the model's μ-law as it sent it.

/** The response the agent is speaking: its audio as queued segments, its words. */
export interface Speaking {
  id: string;
  itemId: string | null;
  segments: SpokenSegment[];
  text: string;
  /** Clock time the caller's turn ended (null for a greeting or a prompt). */
  turnEndAt: number | null;
  firstFrameAt: number | null;
  generated: boolean;
  /** Functions the model called in it: the answer comes in the response their results ask for. */
  toolCalls: number;
  /** Audio short of a whole frame, waiting for the next delta (no padding between deltas). */
  carry: AgentAudio;
}

export interface ModelSpeechDeps {
  /** Tells the model its response stops, and how much of its item was heard. */
  interrupt(heard?: { itemId: string; audioMs: number }): void;
  /** A response was generated and played out. */
  spoken(): Promise<void>;
}

/** The response's words from `startAt` to `endAt`; an answer to the caller's turn carries its latency. */
function responseEntry(shell: CallShell, current: Speaking, text: string, startAt: number, endAt: number, interrupted?: true): TranscriptEntry {
  const entry: TranscriptEntry = { role: 'agent', text, start_ms: shell.since(startAt), end_ms: shell.since(endAt) };
  if (interrupted) entry.interrupted = true;
  if (current.turnEndAt !== null && current.firstFrameAt !== null) entry.latency_ms = Math.round(current.firstFrameAt - current.turnEndAt);
  return entry;
}

/** `carry` then `next`, in one array of `next`'s kind (`next` itself when nothing is carried). */
function joined(carry: AgentAudio, next: AgentAudio): AgentAudio {
  if (carry.length === 0) return next;
  const whole = next instanceof Uint8Array ? new Uint8Array(carry.length + next.length) : new Int16Array(carry.length + next.length);
  whole.set(carry);
  whole.set(next, carry.length);
  return whole;
}

/** Queues the response's audio; its first frame's time is the turn's latency mark. */
function play(shell: CallShell, current: Speaking, audio: AgentAudio) {
  // Asked once, with the response's first audio: the next frame written is its first.
  if (current.segments.length === 0) {
    void shell.speaker.nextFrame().then((at) => {
      current.firstFrameAt = at;
    });
  }
  const segment = shell.speaker.enqueue(audio);
  if (!segment) return shell.overflow('the agent reply exceeded the audio bound');
  current.segments.push(segment);
}

export function modelSpeech(shell: CallShell, deps: ModelSpeechDeps) {
  const { clock, speaker } = shell;
  let speaking: Speaking | null = null;

  /** The response's transcript entry: from its first frame to its last (played or queued). */
  function recordResponse(current: Speaking) {
    const text = current.text.trim();
    if (!text) return;
    const start = current.firstFrameAt ?? clock.now();
    shell.record(responseEntry(shell, current, text, start, start + framesOf(current.segments).frames * 20));
    shell.media.stream.mark(`agent-turn-${shell.transcript.length}`);
  }

  /** The response is generated and played out: its transcript entry, then what follows. */
  async function complete(current: Speaking) {
    await speaker.idle();
    if (speaking !== current || shell.ended) return;
    speaking = null;
    recordResponse(current);
    await deps.spoken();
  }

  /** Barge-in: stop, tell the model what was heard, keep it. */
  function interrupted() {
    const current = speaking;
    if (!current) return;
    speaking = null;
    speaker.clear();
    shell.media.stream.clear();
    const { played, frames } = framesOf(current.segments);
    deps.interrupt(current.itemId ? { itemId: current.itemId, audioMs: played * 20 } : undefined);
    const heard = playedWords(current.text, played, current.generated ? frames : Math.max(frames, played + 1));
    if (heard && current.firstFrameAt !== null) shell.record(responseEntry(shell, current, heard, current.firstFrameAt, clock.now(), true));
  }

  return {
    get current(): Speaking | null {
      return speaking;
    },
    /** A new response: one after a response played in full follows it, one that replaces a response still being generated cuts it. */
    begin(responseId: string, turnEndAt: number | null) {
      if (speaking?.generated) recordResponse(speaking);
      else if (speaking) interrupted();
      speaking = { id: responseId, itemId: null, segments: [], text: '', turnEndAt, firstFrameAt: null, generated: false, toolCalls: 0, carry: new Int16Array(0) };
    },
    /** A delta of the response's audio (PCM16, or μ-law on a `mulaw` call): whole frames are played, the rest carried. */
    audio(event: { responseId: string; itemId: string }, chunk: AgentAudio) {
      const current = speaking;
      if (!current || current.id !== event.responseId) return;
      current.itemId = event.itemId;
      const audio = joined(current.carry, chunk);
      const whole = audio.length - (audio.length % frameLength(audio));
      current.carry = audio.slice(whole);
      if (whole > 0) play(shell, current, audio.subarray(0, whole));
    },
    words(responseId: string, text: string) {
      if (speaking && speaking.id === responseId) speaking.text = text;
    },
    done(event: Extract<SpeechModelEvent, { type: 'response_done' }>) {
      if (!speaking || speaking.id !== event.responseId) return;
      speaking.generated = true;
      if (speaking.carry.length > 0 && event.status !== 'cancelled') play(shell, speaking, speaking.carry);
      speaking.carry = new Int16Array(0);
      // With function calls, the response their results ask for goes on from here.
      if ((event.status === 'completed' || event.status === 'incomplete') && speaking.toolCalls === 0) void complete(speaking);
    },
    interrupted,
    /** The response stops unheard (a machine, a transfer, the end). */
    drop() {
      speaking = null;
    },
  };
}

export type ModelSpeech = ReturnType<typeof modelSpeech>;
