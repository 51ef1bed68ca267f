// One login shared by every tab. The SDK refreshes the access token on `401 token_expired`, and a
// refresh token is single use: two tabs refreshing with the same one look like theft to the
// platform, which then ends the session (RFC 9700). So the dashboard hands the SDK a fetch that
// runs each refresh under a lock shared by the tabs (Web Locks) and, inside it, first looks at the
// last rotation: when another tab has already spent this refresh token, it answers with the
// tokens that tab got instead of spending it again. The rotation is recorded before the lock is
// released, in a store every tab reads consistently (IndexedDB: Chromium's localStorage reaches
// other tabs asynchronously, so a tab may still read the old tokens there just after the lock).
// No DOM types here: the unit test runs it on Node.

export interface StoredTokens {
  accessToken: string;
  refreshToken: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

export interface TokenStore {
  read(): StoredTokens | undefined;
  write(tokens: StoredTokens): void;
  clear(): void;
}

/** The last refresh: which refresh token it spent, and what it got. */
export interface Rotation {
  from: string;
  tokens: StoredTokens;
}

/** Where the last rotation is kept, read and written consistently across tabs. */
export interface RotationLog {
  last(): Promise<Rotation | undefined>;
  record(rotation: Rotation): Promise<void>;
}

export interface Lock {
  run<T>(name: string, work: () => Promise<T>): Promise<T>;
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

const REFRESH_PATH = '/v1/auth/refresh';

function pathOf(input: string | URL | Request): string {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  return new URL(url, 'http://localhost').pathname;
}

function sentRefreshToken(init: RequestInit | undefined): string | undefined {
  if (typeof init?.body !== 'string') return undefined;
  try {
    const body = JSON.parse(init.body) as { refresh_token?: unknown };
    return typeof body.refresh_token === 'string' ? body.refresh_token : undefined;
  } catch {
    return undefined;
  }
}

/** The answer the platform would give, made of tokens another tab already obtained. */
function answerWith(tokens: StoredTokens, now: number): Response {
  const pair = { access_token: tokens.accessToken, refresh_token: tokens.refreshToken, token_type: 'Bearer', expires_in: Math.max(1, Math.floor((tokens.expiresAt - now) / 1000)) };
  return new Response(JSON.stringify(pair), { status: 200, headers: { 'content-type': 'application/json' } });
}

export function storeOf(pair: TokenPair, now: number): StoredTokens {
  return { accessToken: pair.access_token, refreshToken: pair.refresh_token, expiresAt: now + pair.expires_in * 1000 };
}

/** A fetch for the SDK: every request passes through, a refresh runs once across tabs. */
export function guardRefresh(inner: Fetch, store: TokenStore, log: RotationLog, lock: Lock, now: () => number = Date.now): Fetch {
  return (input, init) => {
    if (pathOf(input) !== REFRESH_PATH || init?.method !== 'POST') return inner(input, init);
    return lock.run('vap-token-refresh', async () => {
      const sent = sentRefreshToken(init);
      const last = sent ? await log.last().catch(() => undefined) : undefined;
      if (last && last.from === sent) return answerWith(last.tokens, now());
      const response = await inner(input, init);
      if (response.ok && sent) {
        const tokens = storeOf((await response.clone().json()) as TokenPair, now());
        await log.record({ from: sent, tokens }).catch(() => undefined);
        store.write(tokens);
      }
      return response;
    });
  };
}

/** Web Locks where the browser has them (every current one), else no lock (one tab's own refreshes are already shared by the SDK). */
export function browserLock(locks: { request<T>(name: string, work: () => Promise<T>): Promise<T> } | undefined): Lock {
  return { run: (name, work) => (locks ? locks.request(name, work) : work()) };
}
