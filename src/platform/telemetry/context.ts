import { type Attributes, type Context, context, ROOT_CONTEXT, type Span, type SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';

// Trace context across the places a piece of work waits in between: the request that queued a
// call → the dialer job that runs it, an emitted event → the webhook delivery job, a delivery →
// its receiver. Carried as a W3C `traceparent` string (a column of the queued row, an HTTP
// header). @opentelemetry/api only: without the SDK every span is non-recording and every
// traceparent null.

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C traceparent of the span active in `ctx` (the current one by default); null when none records. */
export function traceparentOf(ctx: Context = context.active()): string | null {
  const span = trace.getSpan(ctx);
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

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent; default the active context. */
  parent?: Context;
}

/**
 * Runs `work` inside a new active span, ended when it settles; a throw marks it failed (its
 * exception type only: a message may quote user data).
 */
export async function inSpan<T>(tracer: Tracer, name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const span = tracer.startSpan(name, { kind: options.kind, attributes: options.attributes }, options.parent ?? context.active());
  try {
    return await context.with(trace.setSpan(options.parent ?? context.active(), span), () => work(span));
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute('error.type', error instanceof Error ? error.name : 'unknown');
    throw error;
  } finally {
    span.end();
  }
}
