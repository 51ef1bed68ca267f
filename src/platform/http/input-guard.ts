import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_STATUS, type ErrorCode, type FieldError, titleFor } from '../errors.ts';
import { problemTypeUrl } from './error-docs.ts';
import { MAX_FIELD_ERRORS, sendProblem } from './error-handler.ts';

// Input the database or the runtime cannot take, refused before any schema, service or query
// sees it, for every route present and future:
// - U+0000 in any string or key of a body or query (PostgreSQL text and jsonb refuse it) → 422
//   naming the field; in a path parameter → 404 (no resource has such an id);
// - a lone UTF-16 surrogate (`"\ud800"`: not Unicode text; jsonb refuses its escape, text columns
//   would silently store U+FFFD instead) in any string or key of a body or query → 422;
// - JSON nested deeper than MAX_DEPTH → 422 (recursive code further on would overflow the stack);
// - the router's own refusals (a path segment that is not valid percent-encoded UTF-8, a
//   parameter longer than the router takes) → problem+json like every other error.

export const MAX_DEPTH = 32;

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
const SURROGATE_MESSAGE = 'must be well-formed Unicode text (a lone UTF-16 surrogate is not)';
// In a `u` regular expression a well-formed surrogate pair is one code point: only lone halves match.
const LONE_SURROGATE = /\p{Cs}/u;

/** Why a string cannot be stored, or undefined when it can. */
function refusalOf(text: string): string | undefined {
  if (text.includes('\u0000')) return NUL_MESSAGE;
  if (LONE_SURROGATE.test(text)) return SURROGATE_MESSAGE;
  return undefined;
}

function joinPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return parent ? `${parent}.${key}` : String(key);
  return parent ? `${parent}.${key}` : key;
}

/**
 * Walks a parsed JSON value without recursion and reports every string or key holding U+0000,
 * and the first place nested deeper than `maxDepth`. `prefix` names the request part (`query`).
 */
export function inspectValue(value: unknown, prefix = '', maxDepth = MAX_DEPTH): FieldError[] {
  const issues: FieldError[] = [];
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: prefix, depth: 0 }];
  while (stack.length > 0) {
    const { value: node, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (typeof node === 'string') {
      const refusal = refusalOf(node);
      if (refusal) issues.push({ path: path || 'body', message: refusal });
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (depth >= maxDepth) {
      issues.push({ path: path || 'body', message: `is nested deeper than ${maxDepth} levels` });
      continue;
    }
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ value: node[i], path: joinPath(path, i), depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(node);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const refusal = refusalOf(key);
      if (refusal) {
        issues.push({ path: joinPath(path, key.replaceAll('\u0000', '\\u0000').replace(/\p{Cs}/gu, '\ufffd')), message: `key ${refusal}` });
        continue;
      }
      stack.push({ value: (node as Record<string, unknown>)[key], path: joinPath(path, key), depth: depth + 1 });
    }
  }
  return issues;
}

/** A 422 for the issues of a request part, with the same shape as a schema failure. */
export function inputRefused(issues: FieldError[]): AppError {
  const detail = issues.slice(0, MAX_FIELD_ERRORS).map((e) => `${e.path}: ${e.message}`).join('; ');
  return new AppError('validation_failed', detail, { errors: issues });
}

/** Throws the 422 when a parsed body holds what the platform cannot take. */
export function assertAcceptableBody(body: unknown) {
  const issues = inspectValue(body);
  if (issues.length > 0) throw inputRefused(issues);
}

function hasRefusedText(record: unknown): boolean {
  if (!record || typeof record !== 'object') return false;
  for (const value of Object.values(record)) {
    if (typeof value === 'string' ? refusalOf(value) : Array.isArray(value) && value.some((v) => typeof v === 'string' && refusalOf(v))) {
      return true;
    }
  }
  return false;
}

/** Path parameters and query strings are checked before validation, bodies as they are parsed. */
export function registerInputGuard(app: FastifyInstance) {
  // After the gate (which refuses a NUL workspace id itself), so the refusal is audited in the
  // caller's workspace like any other 404.
  app.addHook('preValidation', async (request) => {
    if (hasRefusedText(request.params)) throw new AppError('not_found', 'no resource has that id');
    if (hasRefusedText(request.query)) throw inputRefused(inspectValue(request.query, 'query'));
  });
  // Any other body type a module parses (CSV text ...) is checked before its handler runs.
  app.addHook('preHandler', async (request) => {
    if (request.body !== undefined && request.body !== null && !checkedByParser(request)) assertAcceptableBody(request.body);
  });
}

/** JSON bodies are checked by the JSON parser, forms by multipart-form.ts. */
function checkedByParser(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  if (typeof type !== 'string') return false;
  const lower = type.toLowerCase();
  return lower.startsWith('application/json') || lower.startsWith('multipart/form-data');
}

const FRAMEWORK_ERRORS: Record<string, { code: ErrorCode; detail: string }> = {
  FST_ERR_BAD_URL: { code: 'bad_request', detail: 'the URL is not valid: a path segment is not well-formed percent-encoded UTF-8' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'uri_too_long', detail: 'a path parameter is longer than any id this API issues' },
  FST_ERR_ASYNC_CONSTRAINT: { code: 'bad_request', detail: 'the request could not be routed' },
};

/** Fastify's `frameworkErrors` option: the router's refusals as problem+json. */
export function frameworkErrors(error: { code?: string }, _request: FastifyRequest, reply: FastifyReply) {
  const known = FRAMEWORK_ERRORS[error.code ?? ''] ?? { code: 'bad_request' as const, detail: 'the request could not be understood' };
  return sendProblem(reply, known.code, known.detail);
}

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses (malformed request line or
 * header, headers over the size limit, too slow) is answered as problem+json before the socket
 * closes. No request id exists yet: none is given. `publicBaseUrl` roots the problem `type`.
 */
export const clientErrorHandlerFor = (publicBaseUrl: string) => (error: { code?: string }, socket: Socket) => clientError(publicBaseUrl, error, socket);

function clientError(publicBaseUrl: string, error: { code?: string }, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code: ErrorCode =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : error.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : 'bad_request';
  const status = ERROR_STATUS[code];
  const body = JSON.stringify({
    type: problemTypeUrl(publicBaseUrl, code),
    title: titleFor(status),
    status,
    detail: code === 'bad_request' ? 'the HTTP request is malformed' : titleFor(status).toLowerCase(),
    code,
  });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${titleFor(status)}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
