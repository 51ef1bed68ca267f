import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { contextOf, traceparentOf } from './context.ts';
import { createRequestSampler } from './sampler.ts';

// A server span per HTTP request (registered only when tracing is on): named by the route
// template (`POST /v1/calls/outbound`, never the URL with its ids), with the method, route and
// status code. An incoming `traceparent` makes it a child of the caller's trace. A recorded span's
// own traceparent goes on the request (`request.traceParent`, and the gate copies it onto the
// request's WorkspaceContext), so that what the handler starts (a queued call, an emitted event)
// joins its trace. A read that starts no trace (sampler.ts) gets no span at all. No context is entered:
// an async-hooks context manager would slow every await of the process (docs/decisions.md).

export function registerHttpTracing(app: FastifyInstance, tracer: Tracer, readsRatio: number): void {
  const startsTrace = createRequestSampler(readsRatio);
  // Declared up front: every request object keeps one shape, traced or not.
  app.decorateRequest('traceParent', undefined);
  // One hook. A traced request's span ends on its response's `close`, which comes once the
  // response is sent or its connection is gone: a listener on that request only, where an
  // onResponse and an onRequestAbort hook would run on every request (issue 32's 5 % goal).
  app.addHook('onRequest', (request, reply, done) => {
    const header = request.headers.traceparent;
    if (typeof header !== 'string' && !startsTrace(request.method)) return done();
    const parent = contextOf(typeof header === 'string' ? header : null);
    const route = request.routeOptions.url;
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, ...(route ? { 'http.route': route } : {}), 'vap.request_id': request.id } },
      parent,
    );
    const traceParent = traceparentOf(span);
    if (traceParent) request.traceParent = traceParent;
    const response = reply.raw;
    response.once('close', () => {
      if (!response.writableEnded) span.setAttribute('vap.aborted', true);
      else {
        span.setAttribute('http.response.status_code', response.statusCode);
        if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    });
    done();
  });
}
