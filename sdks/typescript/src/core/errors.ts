import type { Problem } from '../generated/models.js';

/** The platform's error codes (openapi.json's Problem.code). */
export type ErrorCode = Problem['code'];

// Errors the SDK throws. An answer of 4xx/5xx becomes an ApiError subclass chosen by status,
// carrying the problem+json fields (RFC 9457) the platform sends; a request that got no answer
// is an ApiConnectionError (ApiTimeoutError when the SDK's timeout ended it).

/** One field at fault in a 422 `validation_failed` answer. */
export interface FieldError {
  path: string;
  message: string;
}

export class VoiceAgentError extends Error {
  override name = 'VoiceAgentError';
}

export class ApiError extends VoiceAgentError {
  override name = 'ApiError';
  /** HTTP status of the answer. */
  readonly status: number;
  /** Stable machine-readable code (`not_found`, `token_expired`, `validation_failed` …). */
  readonly code: ErrorCode | (string & {}) | undefined;
  /** The platform's request id: quote it to support. */
  readonly requestId: string | undefined;
  /** The fields at fault, for `validation_failed`. */
  readonly errors: FieldError[];
  readonly detail: string | undefined;
  readonly type: string | undefined;
  readonly headers: Headers;
  /** The parsed body (or its text when it was not JSON). */
  readonly body: unknown;

  constructor(status: number, body: unknown, headers: Headers) {
    const problem = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const detail = typeof problem.detail === 'string' ? problem.detail : undefined;
    const code = typeof problem.code === 'string' ? problem.code : undefined;
    super(`${status}${code ? ` ${code}` : ''}: ${detail ?? (typeof body === 'string' && body ? body.slice(0, 200) : 'no detail')}`);
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.type = typeof problem.type === 'string' ? problem.type : undefined;
    this.requestId = typeof problem.request_id === 'string' ? problem.request_id : (headers.get('x-request-id') ?? undefined);
    this.errors = Array.isArray(problem.errors) ? (problem.errors as FieldError[]) : [];
    this.headers = headers;
    this.body = body;
  }
}

export class BadRequestError extends ApiError {
  override name = 'BadRequestError';
}
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}
export class PermissionDeniedError extends ApiError {
  override name = 'PermissionDeniedError';
}
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}
/** 422: `errors` lists the fields at fault. */
export class ValidationError extends ApiError {
  override name = 'ValidationError';
}
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
}
export class InternalServerError extends ApiError {
  override name = 'InternalServerError';
}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: ValidationError,
  429: RateLimitError,
};

/** The error for an answer, its body already read. */
export function apiErrorOf(status: number, body: unknown, headers: Headers): ApiError {
  const Class = BY_STATUS[status] ?? (status >= 500 ? InternalServerError : ApiError);
  return new Class(status, body, headers);
}

/** The request got no answer (connection refused or reset, DNS, aborted by the network). */
export class ApiConnectionError extends VoiceAgentError {
  override name = 'ApiConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The SDK's timeout ended the request before an answer. */
export class ApiTimeoutError extends ApiConnectionError {
  override name = 'ApiTimeoutError';
}

/** A webhook whose signature or timestamp does not verify. */
export class WebhookVerificationError extends VoiceAgentError {
  override name = 'WebhookVerificationError';
}
