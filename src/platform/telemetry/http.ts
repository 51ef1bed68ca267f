import { context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { contextOf } from './context.ts';

// A server span per HTTP request (registered only when tracing is on): named by the route
// template (`POST /v1/calls/outbound`, never the URL with its ids), with the method, route and
// status code. An incoming `traceparent` makes it a child of the caller's trace. A recorded span
// becomes the active context from preHandler on (after the body is read), so whatever the handler
// starts (a queued call, an emitted event) knows its trace; a read the sampler left out
// (sampler.ts) enters no context: it would carry nothing.

declare module 'fastify' {
  interface FastifyRequest {
    otelSpan?: Span;
  }
}

export function registerHttpTracing(app: FastifyInstance, tracer: Tracer): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const header = request.headers.traceparent;
    const parent = contextOf(typeof header === 'string' ? header : null);
    const route = request.routeOptions.url;
    request.otelSpan = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, ...(route ? { 'http.route': route } : {}), 'vap.request_id': request.id } },
      parent,
    );
    done();
  });
  app.addHook('preHandler', (request, _reply, done) => {
    if (!request.otelSpan?.isRecording()) return done();
    context.with(trace.setSpan(context.active(), request.otelSpan), done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = request.otelSpan;
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    request.otelSpan?.setAttribute('vap.aborted', true);
    request.otelSpan?.end();
    done();
  });
}
