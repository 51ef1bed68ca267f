import type { ErrorCode } from './errors.ts';

// What each error code means and what the caller can do about it: the one table behind the page
// every problem `type` points at (GET /docs/errors, platform/http/error-docs.ts). Typed by the
// catalog of codes (errors.ts): a code added there without its entry here does not compile.

export interface ErrorDoc {
  meaning: string;
  fix: string;
}

export const ERROR_DOCS: Record<ErrorCode, ErrorDoc> = {
  invalid_json: { meaning: 'The request body is not valid JSON, or it holds a `__proto__` or `constructor.prototype` key.', fix: 'Send a well-formed JSON body with `Content-Type: application/json`.' },
  bad_request: { meaning: 'The request could not be understood: a malformed request line, header, URL or percent-encoding.', fix: 'Check the URL encoding and the headers your client sends.' },
  invalid_webhook_signature: { meaning: "A provider's webhook (payments) arrived without a valid signature.", fix: "Configure the provider's signing secret (STRIPE_WEBHOOK_SECRET) to match the endpoint's." },
  unauthorized: { meaning: 'No credentials, or credentials the platform does not know (a revoked key, an ended session).', fix: 'Send `Authorization: Bearer <access token or sk_ key>`; log in again or create a new API key.' },
  token_expired: { meaning: 'The access token has expired.', fix: 'Refresh it with `POST /v1/auth/refresh` and retry the request.' },
  invalid_token: { meaning: 'A token (access, refresh, mailed link, media or invitation token) is malformed, forged or already used.', fix: 'Start the flow again to get a fresh token.' },
  insufficient_balance: { meaning: "The workspace's wallet cannot pay for this (a call, a number).", fix: 'Top up the wallet (`POST /v1/payments/topup`) or turn on auto-recharge.' },
  payment_failed: { meaning: 'The payment provider declined the charge.', fix: 'Use another payment method, or ask the card issuer.' },
  insufficient_scope: { meaning: "The API key's scope does not allow this operation (a read-only key on a write, a key on a user-only route).", fix: 'Use a key with the `write` or `admin` scope, or a user access token.' },
  forbidden: { meaning: 'The caller is known but not allowed to do this (their role in the workspace, an origin not allowed).', fix: 'Ask a workspace owner or admin, or add the origin to the allowed list.' },
  invalid_signature: { meaning: "A signed link or a telephony provider's request signature did not verify.", fix: 'Use the link as issued (unchanged, before it expires); check the provider auth token.' },
  not_found: { meaning: 'No such resource in this workspace (resources of another workspace are not found either).', fix: 'Check the id and the `X-Workspace-Id` header.' },
  method_not_allowed: { meaning: 'The path exists, but not with this HTTP method.', fix: 'See the operation in /openapi.json for the right method.' },
  not_acceptable: { meaning: 'The representation asked for in `Accept` cannot be produced.', fix: 'Accept `application/json` (or the media type the operation documents).' },
  request_timeout: { meaning: 'The request took too long to arrive (headers or body).', fix: 'Retry; send the body promptly.' },
  conflict: { meaning: 'The change conflicts with the current state: a duplicate (email, name, number) or a concurrent change.', fix: 'Read the resource again and retry with a value not taken.' },
  invalid_state: { meaning: 'The resource is not in a state that allows this operation (ending an ended call, starting a running campaign).', fix: "Check the resource's status first." },
  recording_not_ready: { meaning: 'The call recording is still being made after the call.', fix: 'Retry in a few seconds, or wait for the `call.ended` webhook.' },
  payload_too_large: { meaning: 'The request body is over the limit (1 MiB for JSON; more for documented uploads).', fix: 'Send a smaller body, or split the upload.' },
  range_not_satisfiable: { meaning: 'The `Range` asked for lies outside the file.', fix: 'Ask for a range within the file size (see `Content-Length`).' },
  uri_too_long: { meaning: 'The URL is longer than the platform accepts.', fix: 'Move long values into the request body.' },
  unsupported_media_type: { meaning: 'The body has a `Content-Type` this operation does not take.', fix: 'Send `application/json`, or the media type the operation documents (multipart for uploads).' },
  validation_failed: { meaning: 'The request is invalid: `errors` lists each field path and what is wrong with it.', fix: 'Fix the fields named in `errors` and send again.' },
  idempotency_key_reused: { meaning: 'This `Idempotency-Key` was already used with a different request.', fix: 'Use a new key for a different request; reuse a key only to retry the same one.' },
  no_caller_id: { meaning: 'An outbound call needs a number of the workspace to call from, and none fits.', fix: 'Buy or import a phone number, or pass `from`.' },
  do_not_call: { meaning: "The number is on the workspace's do-not-call list.", fix: 'Remove it from the list (`/v1/dnc`) if the person agreed to be called.' },
  rate_limited: { meaning: 'Too many requests in the window for this key, user or address.', fix: 'Wait for `Retry-After` seconds; the `RateLimit-*` headers show the budget.' },
  headers_too_large: { meaning: 'The request headers are over the size limit.', fix: 'Send fewer or smaller headers (cookies, tokens).' },
  internal: { meaning: 'An unexpected error on the platform; it was logged with the request id.', fix: 'Retry; if it persists, report the `request_id` to the operators.' },
  upstream_error: { meaning: 'A provider the platform depends on (LLM, speech, telephony, payments) failed.', fix: "Retry later; operators see the provider's error in the logs." },
  service_unavailable: { meaning: 'The platform is overloaded or shutting down (its worker threads are full, a dependency is down).', fix: 'Retry after a short wait, with backoff.' },
};
