import type { TurnTimings } from './outcome.ts';
import type { SpokenSegment } from './speaker.ts';
import type { TurnTrace } from './tracing.ts';

// An agent turn as the call session keeps it while it is generated, synthesised and played.

/** The recogniser's part of a turn's timings. */
export type Heard = Pick<TurnTimings, 'stt_ms' | 'stt_wait_ms'>;
export const NOTHING_HEARD: Heard = { stt_ms: 0, stt_wait_ms: 0 };

export type After = { kind: 'end'; reason: 'caller_goodbye' | 'agent_end_call' } | { kind: 'transfer'; to: string; reason: string } | { kind: 'voicemail' };

/** A sentence of the turn and the speaker's segments of its audio (a streaming voice gives it in several pieces). */
export interface SpokenSentence {
  text: string;
  segments: SpokenSegment[];
}

export interface AgentTurn {
  /** The sentences whose audio has started to be queued, in order. */
  sentences: SpokenSentence[];
  controller: AbortController;
  /** Clock time the caller's turn ended (null for turns that answer nobody: greeting, prompts). */
  turnEndAt: number | null;
  firstFrameAt: number | null;
  timings: TurnTimings | null;
  after: After | null;
  /** The reply is complete (all sentences handed to TTS). */
  generated: boolean;
  /** Sentences waiting for synthesis, in order. */
  pending: string[];
  synthesizing: boolean;
  /** The turn's span and its stages (a no-op without tracing). */
  trace: TurnTrace;
}

/** A new turn; `turnEndAt` null for turns that answer nobody (greeting, prompts). */
export function newAgentTurn(turnEndAt: number | null, heard: Heard, trace: TurnTrace): AgentTurn {
  return {
    sentences: [],
    controller: new AbortController(),
    turnEndAt,
    firstFrameAt: null,
    timings: turnEndAt === null ? null : { ...heard, llm_first_token_ms: 0, tts_first_audio_ms: 0 },
    after: null,
    generated: false,
    pending: [],
    synthesizing: false,
    trace,
  };
}
