import type { EngineAction } from '../engine/types.ts';

// The call runtime's tracing port (see docs/decisions.md): spans on the call's own clock, so the
// runtime needs no vendor and no global. The calls module implements it over OpenTelemetry
// (modules/calls/call-trace.ts); without tracing the session gets NO_TRACE and does nothing more
// than call empty functions. A span carries ids, counts, codes and durations, never words: no
// transcript text, no prompt, no tool arguments, no provider message (it may quote the caller).

export type TraceAttributes = Record<string, string | number | boolean>;

export interface TraceSpan {
  /** A child span starting at `startMs` of the call's clock. */
  child(name: string, startMs: number, attributes?: TraceAttributes): TraceSpan;
  set(attributes: TraceAttributes): void;
  /** Marks the span failed, with a code of ours (`stt_failed` …). */
  fail(code: string): void;
  /** Ends the span at `endMs` of the call's clock (only the first end counts). */
  end(endMs: number): void;
}

export const NO_TRACE: TraceSpan = {
  child: () => NO_TRACE,
  set() {},
  fail() {},
  end() {},
};

/** A span of a stage that starts and ends at known times; `duration_ms` is its time on the call's clock. */
export function stage(parent: TraceSpan, name: string, startMs: number, endMs: number, attributes: TraceAttributes = {}): void {
  if (parent === NO_TRACE) return;
  parent.child(name, startMs, { ...attributes, duration_ms: Math.max(0, Math.round(endMs - startMs)) }).end(endMs);
}

export interface TurnTrace {
  readonly span: TraceSpan;
  stage(name: string, startMs: number, endMs: number, attributes?: TraceAttributes): void;
  /** A first-* stage, once per turn. */
  first(name: 'llm.first_token' | 'tts.first_audio', startMs: number, endMs: number): void;
  /** The turn's first frame written: `first_frame_out`, from its first audio. */
  firstFrame(atMs: number): void;
  fail(code: string): void;
  /** Ends the turn (only the first end counts). */
  end(atMs: number, attributes?: TraceAttributes): void;
}

const NO_TURN: TurnTrace = { span: NO_TRACE, stage() {}, first() {}, firstFrame() {}, fail() {}, end() {} };

/**
 * One turn of the call as a span, with its stages as children: `vad.end_of_turn` (the caller's
 * last speech → the detector ended the turn), `stt` (→ the words were there), `llm.first_token`,
 * `tts.first_audio`, `first_frame_out` (first audio → first frame written), and a `tool` per
 * function the engine called. Each first-* stage is recorded once per turn.
 */
export function turnTrace(call: TraceSpan, index: number, startMs: number, kind: 'caller' | 'typed' | 'agent'): TurnTrace {
  if (call === NO_TRACE) return NO_TURN;
  const span = call.child('turn', startMs, { 'turn.index': index, 'turn.kind': kind });
  const seen = new Set<string>();
  let firstAudioAt: number | null = null;
  let ended = false;
  return {
    span,
    stage(name: string, startMs: number, endMs: number, attributes?: TraceAttributes) {
      stage(span, name, startMs, endMs, attributes);
    },
    first(name: 'llm.first_token' | 'tts.first_audio', startMs: number, endMs: number) {
      if (seen.has(name)) return;
      seen.add(name);
      if (name === 'tts.first_audio') firstAudioAt = endMs;
      stage(span, name, startMs, endMs);
    },
    firstFrame(atMs: number) {
      if (seen.has('first_frame_out')) return;
      seen.add('first_frame_out');
      stage(span, 'first_frame_out', firstAudioAt ?? atMs, atMs);
    },
    fail(code: string) {
      span.fail(code);
    },
    end(atMs: number, attributes?: TraceAttributes) {
      if (ended) return;
      ended = true;
      if (attributes) span.set(attributes);
      span.end(atMs);
    },
  };
}

/**
 * The tools the engine used for a reply, each a `tool` span in the reply's window on the call's
 * clock (the engine reports them when the reply is done); `tool.duration_ms` is the call's own
 * time, `tool.status` its HTTP status or `error`. Names and numbers only: no arguments, no result.
 */
export function traceActions(turn: TurnTrace, actions: EngineAction[], startMs: number, endMs: number): void {
  if (turn.span === NO_TRACE) return;
  const window = { duration_ms: Math.max(0, Math.round(endMs - startMs)) };
  for (const action of actions) {
    if (action.type === 'function_call') {
      const result = action.result;
      const status = 'status' in result ? result.status : null;
      const attributes: TraceAttributes = { ...window, 'tool.name': action.name, 'tool.status': status === null ? 'error' : String(status) };
      if ('duration_ms' in result) attributes['tool.duration_ms'] = result.duration_ms;
      const span = turn.span.child('tool', startMs, attributes);
      if (status === null || status >= 400) span.fail('tool_failed');
      span.end(endMs);
    } else if (action.type === 'search_knowledge_base') {
      turn.stage('tool', startMs, endMs, { 'tool.name': 'search_knowledge_base', 'tool.results': action.results });
    }
  }
}
