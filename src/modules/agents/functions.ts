import { randomBytes } from 'node:crypto';
import type { FunctionInvoker } from '../../engine/types.ts';
import type { EngineFunction, FunctionCallResult } from '../../ports/llm.ts';
import type { Clock } from '../../platform/clock.ts';
import { type OutboundClient, UrlRefusedError } from '../../platform/outbound/ssrf-guard.ts';
import { serviceSignature, standardSignature } from '../../platform/outbox/signing.ts';
import type { FunctionTestResult } from './schemas.ts';

// Calls an agent's functions (its webhook tools) as a live call does: one signed HTTP request to
// the function's URL through the SSRF-guarded client. Serves both POST /agents/{id}/test-function
// and the dialogue engine (as its FunctionInvoker).
//
// Request: the arguments travel as JSON `{function, arguments, agent_id, call_id, conversation_id,
// timestamp}` (POST/PUT/PATCH), or as query parameters (GET/DELETE, whose body is empty).
// Headers: `X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body keyed with the whsec_
// string>` (as webhooks), and the Standard Webhooks trio `webhook-id`, `webhook-timestamp`,
// `webhook-signature` (keyed with the base64-decoded secret, signing `id.timestamp.body`).

/** Bytes of a function response kept; the rest is dropped. */
export const FUNCTION_RESPONSE_MAX_BYTES = 64 * 1024;
/** Characters of a non-JSON response body returned as its excerpt. */
export const TEXT_EXCERPT_CHARS = 2000;

export interface FunctionCallContext {
  agentId: string;
  secret: string;
  callId?: string | null;
  conversationId?: string | null;
}

const BODYLESS = new Set(['GET', 'DELETE']);

function parseBody(body: Buffer, contentType: string | undefined): unknown {
  if (body.length === 0) return null;
  const text = body.toString('utf8');
  if (contentType?.includes('json') || /^\s*[[{"]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // not JSON after all: fall through to the excerpt
    }
  }
  return text.length > TEXT_EXCERPT_CHARS ? `${text.slice(0, TEXT_EXCERPT_CHARS)}…` : text;
}

function classify(error: unknown): { code: 'timeout' | 'connection_failed' | 'url_refused'; message: string } {
  const err = error as { name?: string; message?: string; cause?: { name?: string; message?: string; code?: string } };
  const names = [err?.name, err?.cause?.name];
  if (names.includes('TimeoutError') || names.includes('AbortError')) return { code: 'timeout', message: 'the function did not answer within its timeout_ms' };
  if (error instanceof UrlRefusedError || err?.cause instanceof UrlRefusedError || err?.cause?.code === 'EREFUSED_PRIVATE') {
    return { code: 'url_refused', message: `URL refused: ${(err.cause instanceof UrlRefusedError ? err.cause : err).message}` };
  }
  const detail = err?.cause?.code ?? err?.cause?.message ?? err?.message ?? 'unknown error';
  return { code: 'connection_failed', message: `could not reach the function (${detail})` };
}

export function createFunctionCaller(deps: { outbound: Pick<OutboundClient, 'request'>; clock: Clock }) {
  /** Calls one function; network failures come back in `error`, never thrown. */
  async function call(fn: EngineFunction, args: Record<string, unknown>, context: FunctionCallContext): Promise<FunctionTestResult> {
    const now = deps.clock.now();
    const timestamp = Math.floor(now.getTime() / 1000);
    const id = `fcall_${randomBytes(12).toString('hex')}`;
    let url = fn.url;
    let rawBody = '';
    if (BODYLESS.has(fn.method)) {
      const target = new URL(fn.url);
      for (const [key, value] of Object.entries(args)) {
        target.searchParams.set(key, typeof value === 'string' ? value : JSON.stringify(value));
      }
      url = target.toString();
    } else {
      rawBody = JSON.stringify({
        function: fn.name,
        arguments: args,
        agent_id: context.agentId,
        call_id: context.callId ?? null,
        conversation_id: context.conversationId ?? null,
        timestamp: now.toISOString(),
      });
    }
    const headers: Record<string, string> = {
      'x-service-signature': serviceSignature(context.secret, rawBody),
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': standardSignature(context.secret, id, timestamp, rawBody),
      'x-agent-id': context.agentId,
      accept: 'application/json, text/plain;q=0.9, */*;q=0.5',
    };
    if (rawBody) headers['content-type'] = 'application/json';
    const started = performance.now();
    try {
      const response = await deps.outbound.request(url, {
        method: fn.method,
        headers,
        body: rawBody || undefined,
        timeoutMs: fn.timeout_ms,
        maxBytes: FUNCTION_RESPONSE_MAX_BYTES,
        // A signed call is not replayed to wherever a redirect points: the 3xx is the answer.
        maxRedirects: 0,
      });
      return { status: response.status, body: parseBody(response.body, response.headers['content-type']), duration_ms: response.durationMs, error: null };
    } catch (error) {
      return { status: null, body: null, duration_ms: Math.round(performance.now() - started), error: classify(error) };
    }
  }

  return {
    call,
    /** The dialogue engine's port for one agent (and call or conversation): failures are thrown. */
    invokerFor(context: FunctionCallContext): FunctionInvoker {
      return {
        async invoke(fn, args): Promise<FunctionCallResult> {
          const result = await call(fn, args, context);
          if (result.error || result.status === null) throw new Error(result.error?.message ?? 'function call failed');
          return { status: result.status, body: result.body, duration_ms: result.duration_ms };
        },
      };
    },
  };
}

export type FunctionCaller = ReturnType<typeof createFunctionCaller>;
