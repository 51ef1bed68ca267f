import { type Attributes, type Context, ROOT_CONTEXT, type Span, type SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';

// Trace context, carried explicitly (docs/decisions.md, "Observability"): no context manager is
// registered, so `context.active()` is always the root and nothing rides on async hooks. A span
// is handed to the work it parents (`inSpan` gives it to `work`), and across the places a piece
// of work waits in between — the request that queued a call → the dialer job that runs it, an
// emitted event → the webhook delivery job, a delivery → its receiver — as a W3C `traceparent`
// string (a field of the request's WorkspaceContext, a column of the queued row, an HTTP
// header). @opentelemetry/api only: without the SDK every span is non-recording and every
// traceparent null.

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C traceparent of `span`; null when there is none or it does not record. */
export function traceparentOf(span: Span | null | undefined): string | null {
  if (!span?.isRecording()) return null;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

/** A context whose parent is the span a stored traceparent names (the root context when there is none or it is malformed). */
export function contextOf(traceparent: string | null | undefined): Context {
  const match = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!match || /^0+$/.test(match[1]) || /^0+$/.test(match[2])) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: match[1], spanId: match[2], traceFlags: Number.parseInt(match[3], 16), isRemote: true });
}

/** A context whose parent is `span` (the root context without one): the parent argument of `tracer.startSpan`. */
export function contextUnder(span: Span | null | undefined): Context {
  return span ? trace.setSpan(ROOT_CONTEXT, span) : ROOT_CONTEXT;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent: a span of this process, or a context (`contextOf` a stored traceparent); default none, a new trace. */
  parent?: Span | Context | null;
}

const isSpan = (parent: Span | Context): parent is Span => typeof (parent as Span).spanContext === 'function';

/**
 * Runs `work` with a new span, its child of `options.parent`, ended when it settles; a throw marks
 * it failed (its exception type only: a message may quote user data). The span is not made
 * active: `work` passes it on to what it starts.
 */
export async function inSpan<T>(tracer: Tracer, name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = !options.parent ? ROOT_CONTEXT : isSpan(options.parent) ? contextUnder(options.parent) : options.parent;
  const span = tracer.startSpan(name, { kind: options.kind, attributes: options.attributes }, parent);
  try {
    return await work(span);
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute('error.type', error instanceof Error ? error.name : 'unknown');
    throw error;
  } finally {
    span.end();
  }
}
