import { VERSION } from '../version.js';
import { type Credentials, TokenManager } from './auth.js';
import { Download } from './download.js';
import { ApiConnectionError, ApiTimeoutError, apiErrorOf } from './errors.js';
import { type Page, PageIterator } from './pagination.js';
import { backoffMs, mayRepeat, retriableStatus, retryAfterMs } from './retry.js';
import { isServerRuntime, sleep, uuid } from './runtime.js';
import { type BodyKind, encodeBody } from './uploads.js';

// The transport under every resource method: URL and headers, authentication and its refresh,
// timeouts, retries, and turning answers into values or typed errors.

export interface ClientOptions extends Credentials {
  /** The platform's address, e.g. `https://api.example.com` (no `/v1`). */
  baseURL: string;
  /** The workspace to act in (`X-Workspace-Id`) with a user's login; an API key has its own. */
  workspaceId?: string;
  /** Milliseconds until an attempt without an answer is abandoned (default 60 000). */
  timeout?: number;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** First retry delay in milliseconds (default 500), doubling up to `maxRetryDelay` (8 000). */
  retryDelay?: number;
  maxRetryDelay?: number;
  /** Headers sent with every request. */
  defaultHeaders?: Record<string, string>;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  signal?: AbortSignal;
  timeout?: number;
  maxRetries?: number;
  /** The key of this logical request (default: a new UUID per call, reused by its retries). */
  idempotencyKey?: string;
  workspaceId?: string;
  headers?: Record<string, string>;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestSpec {
  operationId: string;
  method: HttpMethod;
  path: string;
  query?: object;
  body?: unknown;
  bodyKind?: BodyKind;
  /** No credentials are sent (login, refresh, the public endpoints). */
  public?: boolean;
  responseType?: 'json' | 'binary' | 'void';
}

export class Core {
  readonly baseURL: string;
  readonly auth: TokenManager;
  private readonly fetch: typeof fetch;

  constructor(
    readonly options: ClientOptions,
    auth?: TokenManager,
  ) {
    if (!options.baseURL) throw new Error('baseURL is required');
    this.baseURL = options.baseURL.replace(/\/+$/, '');
    this.fetch = options.fetch ?? ((...args) => globalThis.fetch(...args));
    this.auth = auth ?? new TokenManager(options, (path, body) => this.request({ operationId: path, method: 'POST', path, body, bodyKind: 'json', public: true }));
  }

  /** The same credentials and tokens with other options (another workspace, say). */
  with(options: Partial<ClientOptions>): Core {
    return new Core({ ...this.options, ...options }, this.auth);
  }

  async request<T>(spec: RequestSpec, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(spec, options);
    if (spec.responseType === 'binary') return new Download(response) as T;
    if (spec.responseType === 'void' || response.status === 204) {
      await response.body?.cancel();
      return undefined as T;
    }
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  paginate<P extends Page<unknown>>(spec: RequestSpec, options: RequestOptions = {}): PageIterator<P['data'][number], P> {
    return new PageIterator<P['data'][number], P>((cursor) =>
      this.request<P>({ ...spec, responseType: 'json', query: { ...spec.query, ...(cursor ? { cursor } : {}) } }, options),
    );
  }

  /** Sends a request until it succeeds, fails for good or runs out of retries. */
  async send(spec: RequestSpec, options: RequestOptions = {}): Promise<Response> {
    const maxRetries = options.maxRetries ?? this.options.maxRetries ?? 2;
    const idempotencyKey = spec.method === 'POST' ? (options.idempotencyKey ?? uuid()) : undefined;
    const encoded = encodeBody(spec.bodyKind, spec.body);
    const url = this.url(spec.path, spec.query);
    let retries = 0;
    let refreshed = false;
    for (;;) {
      const token = spec.public ? undefined : await this.auth.bearer(!encoded.replayable);
      const headers = this.headers(spec, options, { token, idempotencyKey, contentType: encoded.contentType });
      let response: Response;
      try {
        response = await this.attempt(url, { method: spec.method, headers, body: encoded.body }, options);
      } catch (error) {
        if (options.signal?.aborted) throw error;
        const repeat = encoded.replayable && mayRepeat(spec.method, idempotencyKey) && retries < maxRetries;
        if (!repeat) throw error;
        await sleep(this.backoff(retries++), options.signal);
        continue;
      }
      if (response.ok) return response;
      const body = await readBody(response);
      const code = (body as { code?: unknown } | undefined)?.code;
      if (response.status === 401 && code === 'token_expired' && token && !refreshed && encoded.replayable && this.auth.canRefresh) {
        refreshed = true;
        await this.auth.refreshAfter(token);
        continue;
      }
      if (encoded.replayable && retries < maxRetries && retriableStatus(response.status, spec.method, idempotencyKey)) {
        await sleep(retryAfterMs(response.headers) ?? this.backoff(retries), options.signal);
        retries++;
        continue;
      }
      throw apiErrorOf(response.status, body, response.headers);
    }
  }

  private backoff(attempt: number): number {
    return backoffMs(attempt, { baseDelay: this.options.retryDelay ?? 500, maxDelay: this.options.maxRetryDelay ?? 8000 });
  }

  url(path: string, query?: object): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
    }
    const search = params.toString();
    return `${this.baseURL}${path}${search ? `?${search}` : ''}`;
  }

  private headers(spec: RequestSpec, options: RequestOptions, extra: { token?: string; idempotencyKey?: string; contentType?: string }): Record<string, string> {
    const headers: Record<string, string> = { accept: spec.responseType === 'binary' ? '*/*' : 'application/json' };
    if (isServerRuntime()) headers['user-agent'] = `voice-agent-platform-typescript/${VERSION}`;
    if (extra.token) headers.authorization = `Bearer ${extra.token}`;
    const workspace = options.workspaceId ?? this.options.workspaceId;
    if (workspace && !spec.public) headers['x-workspace-id'] = workspace;
    if (extra.idempotencyKey) headers['idempotency-key'] = extra.idempotencyKey;
    if (extra.contentType) headers['content-type'] = extra.contentType;
    return { ...headers, ...this.options.defaultHeaders, ...options.headers };
  }

  /** One attempt, bounded by the timeout until the answer's headers arrive. */
  private async attempt(url: string, init: RequestInit, options: RequestOptions): Promise<Response> {
    const timeout = options.timeout ?? this.options.timeout ?? 60_000;
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    const streaming = typeof ReadableStream !== 'undefined' && init.body instanceof ReadableStream;
    try {
      return await this.fetch(url, { ...init, signal: controller.signal, ...(streaming ? { duplex: 'half' } : {}) } as RequestInit);
    } catch (error) {
      if (timedOut) throw new ApiTimeoutError(`${init.method} ${url}: no answer within ${timeout} ms`);
      if (options.signal?.aborted) throw error;
      throw new ApiConnectionError(`${init.method} ${url}: ${(error as Error)?.message ?? error}`, { cause: error });
    } finally {
      clearTimeout(timer);
      // A download's body is the caller's to cancel from here on (download.stream().cancel()).
      options.signal?.removeEventListener('abort', onAbort);
    }
  }
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  if (!/json/.test(response.headers.get('content-type') ?? '')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
