// One catalog of error codes (DESIGN part 4), one error class, small factories for call sites.
// The HTTP error handler (platform/http/error-handler.ts) renders them as RFC 9457 problem+json.

export const ERROR_STATUS = {
  invalid_json: 400,
  bad_request: 400,
  invalid_webhook_signature: 400,
  unauthorized: 401,
  token_expired: 401,
  invalid_token: 401,
  insufficient_balance: 402,
  payment_failed: 402,
  insufficient_scope: 403,
  forbidden: 403,
  invalid_signature: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  request_timeout: 408,
  conflict: 409,
  invalid_state: 409,
  recording_not_ready: 409,
  payload_too_large: 413,
  range_not_satisfiable: 416,
  uri_too_long: 414,
  unsupported_media_type: 415,
  validation_failed: 422,
  idempotency_key_reused: 422,
  no_caller_id: 422,
  do_not_call: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  upstream_error: 502,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export function titleFor(status: number): string {
  return TITLES[status] ?? 'Error';
}

export interface FieldError {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    detail: string,
    options: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.status = ERROR_STATUS[code];
    this.errors = options.errors;
    this.headers = options.headers;
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const conflict = (detail: string) => new AppError('conflict', detail);
export const invalidState = (detail: string) => new AppError('invalid_state', detail);
export const forbidden = (detail: string) => new AppError('forbidden', detail);
export const unauthorized = (detail = 'missing or invalid credentials') => new AppError('unauthorized', detail);
/** A 422 naming one field, for checks a schema cannot express (uniqueness in a list, SSRF, E.164 ...). */
export const invalidField = (path: string, message: string) =>
  new AppError('validation_failed', `${path}: ${message}`, { errors: [{ path, message }] });
