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

export function createJwtSigner(secret: string, ttlSeconds: number) {
  const key = new TextEncoder().encode(secret);
  return {
    ttlSeconds,
    async sign(claims: AccessClaims, now: Date): Promise<string> {
      const iat = Math.floor(now.getTime() / 1000);
      return new SignJWT({ sid: claims.sid })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(claims.sub)
        .setIssuedAt(iat)
        .setExpirationTime(iat + ttlSeconds)
        .sign(key);
    },
    /** Throws 401 `token_expired` or `invalid_token`. */
    async verify(token: string, now: Date): Promise<AccessClaims> {
      try {
        // `exp` is required: a token signed without one would otherwise be accepted forever.
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: now, requiredClaims: ['exp'] });
        if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') throw new Error('claims');
        return { sub: payload.sub, sid: payload.sid };
      } catch (error) {
        if (error instanceof joseErrors.JWTExpired) {
          throw new AppError('token_expired', 'the access token has expired; refresh it', {
            headers: { 'WWW-Authenticate': 'Bearer error="invalid_token", error_description="token_expired"' },
          });
        }
        throw new AppError('invalid_token', 'the access token is invalid', {
          headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
        });
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
