import { createRequire } from 'node:module';
import type { FastifyBaseLogger } from 'fastify';
import pino, { type DestinationStream, type Logger } from 'pino';
import { serializeRequest } from './http/log-redaction.ts';

// The server's logger and how errors are written into it. pino's standard error serializer copies
// every enumerable field of an error, and a database error (pg, PGlite) carries its query, its
// parameters (password hashes, webhook secrets, key hashes, emails) and a `detail` that quotes the
// offending row. `serializeError` keeps what helps to debug (type, message, SQLSTATE, table,
// constraint, the SQL text, the stack) and drops or blanks every value; it is the `err` serializer
// of every logger the app and the workers write to (createLogger, withLogSerializers).

const REDACTED = '[redacted]';
const MAX_DEPTH = 6;

/** Fields that hold query parameters (pg/PGlite `params`, Kysely `parameters`, knex `bindings`). */
const PARAMETER_FIELDS = new Set(['params', 'parameters', 'bindings', 'queryOptions']);
/** Fields that hold SQL text: kept, with their literals blanked. */
const SQL_FIELDS = new Set(['query', 'internalQuery']);
/** Fields of a PostgreSQL error that may quote values. */
const DATABASE_TEXT_FIELDS = new Set(['detail', 'where', 'hint']);
/** Field names whose string values are secrets wherever they appear (headers, configs). */
const SECRET_FIELD = /authorization|cookie|password|secret|api[-_]?key|^token$|access[-_]?token|refresh[-_]?token/i;

/** Token formats of this platform and of common credentials, blanked in any logged error text. */
const SECRET_TOKENS: RegExp[] = [
  /\$argon2(?:id|i|d)\$[^\s"',)]*/g,
  /whsec_[A-Za-z0-9+/=_-]+/g,
  /\bsk_[0-9A-Za-z]{20,}/g,
  /\b(?:rt|ev|pr|iv)_[A-Za-z0-9_-]{32,}/g,
  /\beyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]+/g,
];

export function scrubSecretTokens(text: string): string {
  return SECRET_TOKENS.reduce((out, pattern) => out.replace(pattern, REDACTED), text);
}

/** SQL text without its literal values: every '…' string (and E'…', $$…$$) is blanked. */
export function redactSqlLiterals(sql: string): string {
  return sql.replace(/'(?:[^']|'')*'/g, "'…'").replace(/\$([A-Za-z_]\w*)?\$[\s\S]*?\$\1\$/g, '$$…$$');
}

interface DatabaseErrorLike {
  code: string;
  message: string;
}

/** A PostgreSQL error as pg and PGlite raise it: a SQLSTATE code and the server's fields. */
function isDatabaseError(value: unknown): value is DatabaseErrorLike {
  const e = value as Record<string, unknown> | null;
  return (
    typeof e === 'object' && e !== null && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) &&
    typeof e.message === 'string' && ('severity' in e || 'routine' in e || 'query' in e)
  );
}

/**
 * A PostgreSQL message, detail, context or hint without the values it quotes: the offending row
 * of `Failing row contains (…)`, the key of `Key (email)=(…)`, '…' literals and, for data
 * exceptions (SQLSTATE class 22, whose messages echo the input), every "…" quotation.
 */
export function redactDatabaseText(text: string, sqlState?: string): string {
  let out = text
    .replace(/(Failing row contains )\([\s\S]*$/, '$1(…)')
    .replace(/\)=\([\s\S]*$/, ')=(…)')
    .replace(/'(?:[^']|'')*'/g, "'…'")
    .replace(/(JSON data, line \d+:)[\s\S]*$/, '$1 …');
  if (sqlState?.startsWith('22')) out = out.replace(/"(?:[^"]|"")*"/g, '"…"');
  return out;
}

function chainOf(err: unknown, seen = new Set<unknown>()): unknown[] {
  if (typeof err !== 'object' || err === null || seen.has(err)) return [];
  seen.add(err);
  const e = err as { cause?: unknown; errors?: unknown };
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((inner) => chainOf(inner, seen)) : [];
  return [err, ...chainOf(e.cause, seen), ...nested];
}

function scrubValue(value: unknown, key: string, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') {
    if (SECRET_FIELD.test(key)) return REDACTED;
    if (SQL_FIELDS.has(key)) return scrubSecretTokens(redactSqlLiterals(value));
    return scrubSecretTokens(value);
  }
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH || seen.has(value)) return '[…]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, key, depth + 1, seen));
  // A database error, at the top or nested (aggregateErrors, a wrapper's field): blank what it quotes.
  const sqlState = isDatabaseError(value) ? value.code : undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (PARAMETER_FIELDS.has(k)) continue;
    const text = sqlState && typeof v === 'string' && (DATABASE_TEXT_FIELDS.has(k) || k === 'message') ? redactDatabaseText(v, sqlState) : v;
    out[k] = scrubValue(text, k, depth + 1, seen);
  }
  return out;
}

/** pino `err` serializer: the standard one, then every value of a query or a secret blanked. */
export function serializeError(err: unknown): unknown {
  if (typeof err !== 'object' || err === null) return err;
  const standard = { ...(pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>) };
  // The standard serializer folds the causes' messages into `message` and `stack`: blank the
  // values each database error of the chain quotes wherever its message was copied.
  for (const inner of chainOf(err).filter(isDatabaseError)) {
    const redacted = redactDatabaseText(inner.message, inner.code);
    if (redacted === inner.message) continue;
    for (const field of ['message', 'stack']) {
      if (typeof standard[field] === 'string') standard[field] = (standard[field] as string).replaceAll(inner.message, redacted);
    }
  }
  return scrubValue(standard, 'err', 0, new WeakSet());
}

/** The serializers of every logger the server writes to. */
export const LOG_SERIALIZERS = { req: serializeRequest, err: serializeError, error: serializeError };

/** LOG_FORMAT: `auto` is pretty on a terminal and JSON otherwise (a file, a pipe, a log shipper). */
export type LogFormat = 'auto' | 'json' | 'pretty';

export function resolveLogFormat(format: LogFormat, isTTY: boolean): 'json' | 'pretty' {
  return format === 'auto' ? (isTTY ? 'pretty' : 'json') : format;
}

/**
 * Human-readable lines (pino-pretty, loaded only then): time, level and message first, the fields
 * after. Colours only on a terminal. Written synchronously: a terminal is a developer's.
 */
function prettyStream(destination: DestinationStream | undefined): DestinationStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return pretty({
    colorize: destination === undefined && Boolean(process.stdout.isTTY),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: false,
    sync: true,
    destination: destination ?? 1,
  });
}

/** Bytes of JSON lines gathered before they are written (a request's line is about 300). */
export const LOG_BATCH_BYTES = 4096;
/** The longest a line waits for the batch to fill: then whatever is gathered is written. */
export const LOG_FLUSH_MS = 250;

/**
 * Where the server's JSON lines go (stdout, or a file): written asynchronously in batches of
 * LOG_BATCH_BYTES, and at least every LOG_FLUSH_MS. Written line by line, each request's line
 * cost the request an fs.write of its own (the largest per-request cost the http profile found;
 * bench hot-path, a line a millisecond: 21.7 µs of CPU written alone, 3.9 µs batched). pino writes what is left when the process exits; a process
 * killed outright loses at most the last quarter-second.
 */
export function logDestination(dest: number | string = 1): DestinationStream {
  const stream = pino.destination({ dest, sync: false, minLength: LOG_BATCH_BYTES });
  // An empty batch is a zero-byte write: four a second, against one per request.
  const flusher = setInterval(() => {
    try {
      stream.flush();
    } catch {
      // Destroyed (it throws then): nothing more will be written.
      clearInterval(flusher);
    }
  }, LOG_FLUSH_MS);
  flusher.unref();
  stream.once('close', () => clearInterval(flusher));
  return stream;
}

/**
 * A pino logger with the server's serializers, to stdout or to `destination`; JSON lines unless
 * `format` resolves to pretty (the default is JSON: an embedder or a test reads lines).
 */
export function createLogger(options: { level: string; destination?: DestinationStream; format?: LogFormat }): Logger {
  const settings = { level: options.level, serializers: LOG_SERIALIZERS };
  if (resolveLogFormat(options.format ?? 'json', Boolean(process.stdout.isTTY)) === 'pretty') return pino(settings, prettyStream(options.destination));
  // A silent logger writes nothing: no stream (tests build many apps in one process).
  if (options.level === 'silent' && !options.destination) return pino(settings, { write: () => undefined });
  // stdout written asynchronously in batches: a line costs the request a buffer append, not a
  // write of its own on the event loop.
  return pino(settings, options.destination ?? logDestination());
}

/** A logger given from outside (tests, embedders) with the server's serializers applied. */
export function withLogSerializers(logger: FastifyBaseLogger): FastifyBaseLogger {
  return logger.child({}, { serializers: LOG_SERIALIZERS });
}
