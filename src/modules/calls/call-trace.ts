import { ROOT_CONTEXT, type Span, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { RuntimeClock } from '../../ports/clock.ts';
import type { TraceAttributes, TraceSpan } from '../../runtime/tracing.ts';

// The runtime's tracing port (src/runtime/tracing.ts) over OpenTelemetry. The session speaks in
// its clock's milliseconds; a span's times are wall time: a moment of the call's clock maps to
// now less the clock time since then at the clock's scale. On a real clock (every real call)
// that is exact; on a sandbox call's virtual clock the spans keep their order within the wall
// time the call took, and each stage's `duration_ms` attribute gives its time on the call's clock.

const wallNow = () => performance.timeOrigin + performance.now();

/** Epoch milliseconds of `ms` on `clock`. */
export function wallTimeOf(clock: RuntimeClock): (ms: number) => number {
  const scale = Number.isFinite(clock.scale) ? Math.min(1, Math.max(0, clock.scale)) : 0;
  return (ms) => wallNow() + (ms - clock.now()) * scale;
}

/** `span` (the call's) as the session's TraceSpan, its children timed on `clock`. */
export function callTraceSpan(tracer: Tracer, span: Span, clock: RuntimeClock): TraceSpan {
  const wall = wallTimeOf(clock);
  const wrap = (own: Span, endable: boolean): TraceSpan => ({
    child(name, startMs, attributes) {
      return wrap(tracer.startSpan(name, { startTime: wall(startMs), attributes }, trace.setSpan(ROOT_CONTEXT, own)), true);
    },
    set(attributes: TraceAttributes) {
      own.setAttributes(attributes);
    },
    fail(code) {
      own.setStatus({ code: SpanStatusCode.ERROR, message: code });
      own.setAttribute('error.type', code);
    },
    end(endMs) {
      // The call's own span is ended by its owner (the runner), when the call's work is done.
      if (endable) own.end(wall(endMs));
    },
  });
  return wrap(span, false);
}
