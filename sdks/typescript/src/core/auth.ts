import { ApiError } from './errors.js';

// Credentials and the tokens of a login. With an API key every request carries the key. With
// email and password the SDK logs in at the first request, and when the access token expires
// (401 `token_expired`) it refreshes it once for every request in flight: they all wait on the
// same refresh, then resend. A streamed body cannot be resent, so before one is sent a token past
// half its lifetime is refreshed first. A refresh token that no longer works falls back to the
// password.

/** What `onTokens` is told after every login and refresh: persist it to resume later. */
export interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** When the access token expires (milliseconds since the epoch). */
  expiresAt: number;
}

export interface Credentials {
  /** An `sk_` API key (server side). */
  apiKey?: string;
  email?: string;
  password?: string;
  /** Tokens saved from an earlier `onTokens` (resume without the password). */
  accessToken?: string;
  refreshToken?: string;
  /** Called with the new tokens after every login and refresh. */
  onTokens?: (tokens: Tokens) => void | Promise<void>;
}

interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

export type TokenCall = (path: '/v1/auth/login' | '/v1/auth/refresh', body: Record<string, string>) => Promise<TokenPair>;

export class TokenManager {
  private accessToken: string | undefined;
  private refreshToken: string | undefined;
  /** When the access token was issued and expires (milliseconds since the epoch; 0: unknown). */
  private issuedAt = 0;
  private expiresAt = 0;
  private pending: Promise<void> | undefined;

  constructor(
    private readonly credentials: Credentials,
    private readonly call: TokenCall,
  ) {
    this.accessToken = credentials.accessToken;
    this.refreshToken = credentials.refreshToken;
    const resumed = claimedLifetime(credentials.accessToken);
    this.issuedAt = resumed.issuedAt;
    this.expiresAt = resumed.expiresAt;
  }

  /** Whether a 401 `token_expired` can be cured here. */
  get canRefresh(): boolean {
    return !this.credentials.apiKey && Boolean(this.refreshToken || this.hasPassword);
  }

  get tokens(): Tokens | undefined {
    return this.accessToken && this.refreshToken ? { accessToken: this.accessToken, refreshToken: this.refreshToken, expiresAt: this.expiresAt } : undefined;
  }

  private get hasPassword(): boolean {
    return Boolean(this.credentials.email && this.credentials.password);
  }

  /**
   * The bearer for the next request (logging in first when only a password is known). `sentOnce`:
   * the body cannot be resent, so a 401 `token_expired` could not be cured by refreshing and
   * resending; the token is refreshed first when it is past half its lifetime instead.
   */
  async bearer(sentOnce = false): Promise<string | undefined> {
    if (this.credentials.apiKey) return this.credentials.apiKey;
    if (!this.accessToken && this.hasPassword) await this.once(() => this.login());
    else if (sentOnce && this.pastHalfLife && this.canRefresh) await this.once(() => this.refresh());
    return this.accessToken;
  }

  /** Half, not the end: a token close to its expiry may expire before the server checks it. */
  private get pastHalfLife(): boolean {
    return this.expiresAt > 0 && Date.now() >= (this.issuedAt + this.expiresAt) / 2;
  }

  /** Cures `stale`, the token a request was refused with; concurrent callers share one refresh. */
  async refreshAfter(stale: string): Promise<void> {
    if (this.accessToken !== stale && this.accessToken) return;
    await this.once(() => this.refresh());
  }

  async store(pair: TokenPair): Promise<void> {
    this.accessToken = pair.access_token;
    this.refreshToken = pair.refresh_token;
    this.issuedAt = Date.now();
    this.expiresAt = this.issuedAt + pair.expires_in * 1000;
    await this.credentials.onTokens?.(this.tokens!);
  }

  clear(): void {
    this.accessToken = undefined;
    this.refreshToken = undefined;
    this.issuedAt = 0;
    this.expiresAt = 0;
  }

  private once(work: () => Promise<void>): Promise<void> {
    this.pending ??= work().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async login(): Promise<void> {
    await this.store(await this.call('/v1/auth/login', { email: this.credentials.email!, password: this.credentials.password! }));
  }

  private async refresh(): Promise<void> {
    if (this.refreshToken) {
      try {
        return await this.store(await this.call('/v1/auth/refresh', { refresh_token: this.refreshToken }));
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 401 && this.hasPassword)) throw error;
      }
    }
    if (!this.hasPassword) throw new Error('the session expired and there is no password to log in again');
    await this.login();
  }
}

/**
 * When a resumed access token was issued and expires, from its JWT `iat` and `exp` claims (0 and 0
 * when it is no JWT with an `exp`). Read without verifying: the server verifies; the SDK only
 * learns when to refresh. Without `iat` the token counts as issued at its expiry (refreshed once
 * expired).
 */
function claimedLifetime(token: string | undefined): { issuedAt: number; expiresAt: number } {
  const unknown = { issuedAt: 0, expiresAt: 0 };
  const payload = token?.split('.')[1];
  if (!payload) return unknown;
  try {
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { iat?: unknown; exp?: unknown };
    if (typeof claims.exp !== 'number') return unknown;
    const issued = typeof claims.iat === 'number' ? claims.iat : claims.exp;
    return { issuedAt: issued * 1000, expiresAt: claims.exp * 1000 };
  } catch {
    return unknown;
  }
}
