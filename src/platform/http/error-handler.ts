import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, ERROR_STATUS, type FieldError, titleFor } from '../errors.ts';
import { problemTypeUrl } from './error-docs.ts';

// The one renderer of errors: every failure leaves as RFC 9457 application/problem+json,
// never with a stack, SQL or an unknown error's message.

declare module 'fastify' {
  interface FastifyInstance {
    /** The platform's public base URL: each problem `type` is `<base>/docs/errors#<code>` (error-docs.ts). */
    problemTypeBase: string;
  }
}
/** At most this many entries in a problem's `errors`; `error_count` then gives the total. */
export const MAX_FIELD_ERRORS = 20;
const MAX_DETAIL = 2_000;
const MAX_PATH = 200;

/** A long field path or detail (a hostile key of 100,000 characters) is cut, not echoed whole. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
}

/** Ajv issues → `[{path, message}]`; body paths are relative to the body, others prefixed (`query.limit`). */
export function fieldErrors(issues: AjvIssue[], context: string | undefined): FieldError[] {
  const prefix = context && context !== 'body' ? (context === 'querystring' ? 'query' : context) : '';
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const issue of issues) {
    // The condition array-bounds.ts wraps around an array's item checks: the item errors say it.
    if (issue.keyword === 'if') continue;
    let path = pointerToPath(issue.instancePath);
    let message = issue.message ?? 'is invalid';
    if (issue.keyword === 'required') {
      path = [path, String(issue.params.missingProperty)].filter(Boolean).join('.');
      message = 'is required';
    } else if (issue.keyword === 'additionalProperties') {
      path = [path, String(issue.params.additionalProperty)].filter(Boolean).join('.');
      message = 'is not a known field';
    } else if (issue.keyword === 'enum') {
      message = `must be one of ${(issue.params.allowedValues as unknown[]).map(String).join(', ')}`;
    }
    const full = [prefix, path].filter(Boolean).join('.') || (prefix || 'body');
    const key = `${full}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path: full, message });
  }
  return out;
}

export function problemBody(request: FastifyRequest, code: ErrorCode, detail: string, errors?: FieldError[]) {
  const status = ERROR_STATUS[code];
  const count = errors?.length ?? 0;
  return {
    // An app without the decoration (a bare test app) links relatively: still the platform's page.
    type: problemTypeUrl(request.server.problemTypeBase ?? '', code),
    title: titleFor(status),
    status,
    detail: cut(detail, MAX_DETAIL),
    code,
    request_id: String(request.id),
    ...(errors && count > 0
      ? { errors: errors.slice(0, MAX_FIELD_ERRORS).map((e) => ({ path: cut(e.path, MAX_PATH), message: cut(e.message, MAX_PATH) })) }
      : {}),
    ...(count > MAX_FIELD_ERRORS ? { error_count: count } : {}),
  };
}

export function sendProblem(
  reply: FastifyReply,
  code: ErrorCode,
  detail: string,
  errors?: FieldError[],
  headers?: Record<string, string>,
) {
  const body = problemBody(reply.request, code, detail, errors);
  if (headers) reply.headers(headers);
  return reply.code(body.status).type('application/problem+json').send(body);
}

function classify(error: FastifyError & { validation?: AjvIssue[]; validationContext?: string }): {
  code: ErrorCode;
  detail: string;
  errors?: FieldError[];
} {
  if (error instanceof AppError) return { code: error.code, detail: error.message, errors: error.errors };
  if (error.validation) {
    const errors = fieldErrors(error.validation, error.validationContext);
    return {
      code: 'validation_failed',
      detail: errors.slice(0, MAX_FIELD_ERRORS).map((e) => `${e.path}: ${e.message}`).join('; ') || 'request is invalid',
      errors,
    };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'invalid_json', detail: 'the request body is not valid JSON (or holds a __proto__ or constructor.prototype key)' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
      return { code: 'payload_too_large', detail: 'the request body is too large' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return { code: 'unsupported_media_type', detail: 'unsupported Content-Type for this operation' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: 'bad_request', detail: 'Content-Length does not match the body' };
  }
  // Unique violation raised by the database: a concurrent duplicate.
  if ((error as { code?: string }).code === '23505') return { code: 'conflict', detail: 'the resource already exists' };
  if (error.statusCode === 415) return { code: 'unsupported_media_type', detail: 'unsupported Content-Type' };
  if (error.statusCode === 413) return { code: 'payload_too_large', detail: 'the request body is too large' };
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return { code: 'bad_request', detail: 'the request could not be understood' };
  }
  return { code: 'internal', detail: 'an internal error occurred; quote the request_id when reporting it' };
}

export function registerErrorHandling(
  app: FastifyInstance,
  options: { publicBaseUrl?: string; notFoundFallback?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | null } = {},
) {
  app.decorate('problemTypeBase', options.publicBaseUrl ?? '');
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { code, detail, errors } = classify(error);
    if (code === 'internal') request.log.error({ err: error }, 'unhandled error');
    const headers = error instanceof AppError ? error.headers : undefined;
    return sendProblem(reply, code, detail, errors, headers);
  });
  // A route-less address may still be something's (the dashboard's client routes); else 404.
  app.setNotFoundHandler(
    (request, reply) => options.notFoundFallback?.(request, reply) ?? sendProblem(reply, 'not_found', `no route for ${request.method} ${request.url.split('?')[0]}`),
  );
}
