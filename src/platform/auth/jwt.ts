import fs from 'node:fs/promises';
import path from 'node:path';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { AppError } from '../errors.ts';
import { randomToken } from '../secrets.ts';

// Access tokens: JWT HS256 with `sub` (user), `sid` (session), `exp`.

export interface AccessClaims {
  sub: string;
  sid: string;
}

/** How many recently verified tokens are remembered (their signature is not checked again). */
const VERIFIED_TOKENS = 10_000;

interface Verified extends AccessClaims {
  /** `exp` and `nbf` in seconds, checked again on every use. */
  exp: number;
  nbf: number | undefined;
}

const tokenExpired = () =>
  new AppError('token_expired', 'the access token has expired; refresh it', {
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_token", error_description="token_expired"' },
  });
const tokenInvalid = () => new AppError('invalid_token', 'the access token is invalid', { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });

export function createJwtSigner(secret: string, ttlSeconds: number) {
  const key = new TextEncoder().encode(secret);
  // A bounded LRU of tokens whose signature verified: a client sends the same token many times,
  // and HMAC verification through jose is the largest cost of a JWT request after the database.
  // Expiry is checked on every use, by the caller's clock, as jose would.
  const verified = new Map<string, Verified>();

  function remembered(token: string, now: Date): AccessClaims | undefined {
    const hit = verified.get(token);
    if (!hit) return undefined;
    const seconds = Math.floor(now.getTime() / 1000);
    if (hit.exp <= seconds) {
      verified.delete(token);
      throw tokenExpired();
    }
    // Not yet valid: let jose decide (and say why).
    if (hit.nbf !== undefined && hit.nbf > seconds) return undefined;
    // Most recently used last.
    verified.delete(token);
    verified.set(token, hit);
    return { sub: hit.sub, sid: hit.sid };
  }

  return {
    ttlSeconds,
    async sign(claims: AccessClaims, now: Date): Promise<string> {
      const iat = Math.floor(now.getTime() / 1000);
      // `exp` rounded up, not down: the token lives at least the `expires_in` the client is told
      // (`ttlSeconds`), never up to a second less. A client refreshing at half that lifetime
      // before a body it cannot resend keeps the other half as margin.
      return new SignJWT({ sid: claims.sid })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(claims.sub)
        .setIssuedAt(iat)
        .setExpirationTime(Math.ceil(now.getTime() / 1000) + ttlSeconds)
        .sign(key);
    },
    /** Throws 401 `token_expired` or `invalid_token`. */
    async verify(token: string, now: Date): Promise<AccessClaims> {
      const known = remembered(token, now);
      if (known) return known;
      try {
        // `exp` is required: a token signed without one would otherwise be accepted forever.
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: now, requiredClaims: ['exp'] });
        if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.exp !== 'number') throw new Error('claims');
        if (verified.size >= VERIFIED_TOKENS) verified.delete(verified.keys().next().value as string);
        verified.set(token, { sub: payload.sub, sid: payload.sid, exp: payload.exp, nbf: typeof payload.nbf === 'number' ? payload.nbf : undefined });
        return { sub: payload.sub, sid: payload.sid };
      } catch (error) {
        if (error instanceof joseErrors.JWTExpired) throw tokenExpired();
        throw tokenInvalid();
      }
    },
  };
}

export type JwtSigner = ReturnType<typeof createJwtSigner>;

/** JWT_SECRET when set; otherwise one generated on first start and kept in DATA_DIR. */
export async function resolveJwtSecret(configured: string | undefined, dataDir: string): Promise<string> {
  if (configured) return configured;
  const file = path.join(dataDir, 'jwt-secret');
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    await fs.mkdir(dataDir, { recursive: true });
    const secret = randomToken('', 48);
    await fs.writeFile(file, secret, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return (await fs.readFile(file, 'utf8')).trim();
  }
}
