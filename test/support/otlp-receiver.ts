import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BinaryReader } from '@bufbuild/protobuf';

// A local OTLP/HTTP collector for the tracing tests: accepts `POST /v1/traces` in both OTLP/HTTP
// encodings — protobuf (`application/x-protobuf`, the default) and JSON (`application/json`) — as
// the OTLP specification defines them (opentelemetry-proto's trace.proto: ExportTraceServiceRequest
// → ResourceSpans → ScopeSpans → Span) and keeps every span, flattened, with the encoding it came in.

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  attributes: Record<string, string | number | boolean>;
  service: string | undefined;
  encoding: 'protobuf' | 'json';
}

interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}
type KeyValue = { key: string; value: AnyValue };

function anyValue(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return JSON.stringify(value);
}

const attributesOf = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));

/** The spans of an OTLP JSON export request. */
function spansOfJson(text: string): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  const body = JSON.parse(text);
  for (const resourceSpans of body.resourceSpans ?? []) {
    const service = attributesOf(resourceSpans.resource?.attributes)['service.name'] as string | undefined;
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          name: span.name,
          kind: span.kind,
          statusCode: span.status?.code ?? 0,
          attributes: attributesOf(span.attributes),
          service,
          encoding: 'json',
        });
      }
    }
  }
  return spans;
}

/** Each field of a protobuf message, read by `read` (field number, reader): the rest is skipped. */
function readFields(bytes: Uint8Array, read: (field: number, reader: BinaryReader) => boolean): void {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (!read(field, reader)) reader.skip(wireType);
  }
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

function anyValueOfProto(bytes: Uint8Array): string | number | boolean {
  let value: string | number | boolean = '';
  readFields(bytes, (field, reader) => {
    if (field === 1) value = reader.string();
    else if (field === 2) value = reader.bool();
    else if (field === 3) value = Number(reader.int64());
    else if (field === 4) value = reader.double();
    else return false;
    return true;
  });
  return value;
}

function keyValueOfProto(bytes: Uint8Array): [string, string | number | boolean] {
  let key = '';
  let value: string | number | boolean = '';
  readFields(bytes, (field, reader) => {
    if (field === 1) key = reader.string();
    else if (field === 2) value = anyValueOfProto(reader.bytes());
    else return false;
    return true;
  });
  return [key, value];
}

function spanOfProto(bytes: Uint8Array, service: string | undefined): ReceivedSpan {
  const span: ReceivedSpan = { traceId: '', spanId: '', parentSpanId: undefined, name: '', kind: 0, statusCode: 0, attributes: {}, service, encoding: 'protobuf' };
  readFields(bytes, (field, reader) => {
    if (field === 1) span.traceId = hex(reader.bytes());
    else if (field === 2) span.spanId = hex(reader.bytes());
    else if (field === 4) span.parentSpanId = hex(reader.bytes()) || undefined;
    else if (field === 5) span.name = reader.string();
    else if (field === 6) span.kind = reader.int32();
    else if (field === 9) {
      const [key, value] = keyValueOfProto(reader.bytes());
      span.attributes[key] = value;
    } else if (field === 15) {
      readFields(reader.bytes(), (statusField, status) => {
        if (statusField !== 3) return false;
        span.statusCode = status.int32();
        return true;
      });
    } else return false;
    return true;
  });
  return span;
}

/** The spans of an OTLP protobuf export request. */
function spansOfProto(bytes: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  readFields(bytes, (field, request) => {
    if (field !== 1) return false;
    let service: string | undefined;
    const scopes: Uint8Array[] = [];
    readFields(request.bytes(), (resourceField, resourceSpans) => {
      if (resourceField === 1) {
        readFields(resourceSpans.bytes(), (attributeField, resource) => {
          if (attributeField !== 1) return false;
          const [key, value] = keyValueOfProto(resource.bytes());
          if (key === 'service.name') service = String(value);
          return true;
        });
      } else if (resourceField === 2) scopes.push(resourceSpans.bytes());
      else return false;
      return true;
    });
    for (const scope of scopes) {
      readFields(scope, (scopeField, scopeSpans) => {
        if (scopeField !== 2) return false;
        spans.push(spanOfProto(scopeSpans.bytes(), service));
        return true;
      });
    }
    return true;
  });
  return spans;
}

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  let exports = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = String(req.headers['content-type']);
      const json = type.startsWith('application/json');
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !(json || type.startsWith('application/x-protobuf'))) {
        res.writeHead(404).end();
        return;
      }
      exports++;
      const body = Buffer.concat(chunks);
      spans.push(...(json ? spansOfJson(body.toString('utf8')) : spansOfProto(body)));
      // An empty ExportTraceServiceResponse in the request's own encoding.
      if (json) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    /** Export requests received. */
    get exports() {
      return exports;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
