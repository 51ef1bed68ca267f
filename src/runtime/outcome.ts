// What a call session reports while it runs (to an observer that persists it) and when it ends.
import type { SessionEndReason } from '../ports/telephony.ts';

/** One entry of a call's transcript. Times are in the call's clock milliseconds since it was answered. */
export interface TranscriptEntry {
  role: 'agent' | 'user';
  text: string;
  start_ms: number;
  end_ms: number;
  /** A keypad digit the caller pressed (the text is the digit); it starts no agent turn. */
  dtmf?: boolean;
  /** Agent turns cut by a barge-in keep the words actually played. */
  interrupted?: boolean;
  /** Agent turns answering a caller turn: end of the caller's turn → first agent audio frame written. */
  latency_ms?: number;
  timings?: TurnTimings;
}

/** Where an answering turn's time went, in the call's milliseconds. */
export interface TurnTimings {
  /** The recogniser's own time for the turn's words (also when it ran early, during a pause). */
  stt_ms: number;
  /** What the turn waited for its transcript after it ended (0 when an early answer was back). */
  stt_wait_ms: number;
  llm_first_token_ms: number;
  tts_first_audio_ms: number;
}

export interface CallLatency {
  turns: number;
  p50_ms: number | null;
  p95_ms: number | null;
}

export type SessionStatus = 'completed' | 'transferred' | 'voicemail' | 'failed';

export interface SessionOutcome {
  status: SessionStatus;
  endReason: SessionEndReason;
  transferredTo?: string;
  error?: { code: string; message: string };
  /** From the answer to the end, in the call's clock milliseconds. */
  durationMs: number;
  transcript: TranscriptEntry[];
  latency: CallLatency | null;
}

/** Told as the call goes; must not block (the persisting side queues its writes). */
export interface SessionObserver {
  transcript(entry: TranscriptEntry, turn: number): void;
  transfer(to: string, reason: string): void;
  error(code: string, message: string): void;
}

/** Where the session writes both sides' audio (the call recorder). */
export interface RecorderSink {
  addCaller(atMs: number, frame: Int16Array): void;
  addAgent(atMs: number, frame: Int16Array): void;
  /** A call whose audio stays the carrier's μ-law 8 kHz: recorded as it is, decoded when taken. */
  addCallerMulaw(atMs: number, mulaw: Uint8Array): void;
  addAgentMulaw(atMs: number, frame: Uint8Array): void;
}

/** Nearest-rank percentile of sorted values. */
function nearestRank(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The call's latency figures: agent turns that answered a caller turn. */
export function latencySummary(transcript: TranscriptEntry[]): CallLatency {
  const values = transcript.filter((e) => e.role === 'agent' && typeof e.latency_ms === 'number').map((e) => e.latency_ms as number);
  values.sort((a, b) => a - b);
  if (values.length === 0) return { turns: 0, p50_ms: null, p95_ms: null };
  return { turns: values.length, p50_ms: nearestRank(values, 50), p95_ms: nearestRank(values, 95) };
}
