import type { Config } from '../../config.ts';
import type { JwtSigner } from '../../platform/auth/jwt.ts';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from '../../platform/auth/passwords.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Executor } from '../../platform/db/schema.ts';
import type { UsersTable } from '../../platform/db/foundation-tables.ts';
import { AppError, conflict } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Mailer } from '../../platform/mailer.ts';
import { usdToMicros } from '../../platform/money.ts';
import { randomToken, sha256Hex } from '../../platform/secrets.ts';
import type { WalletRepo } from '../wallet/repo.ts';
import type { WorkspacesRepo } from '../workspaces/repo.ts';
import type { UsersRepo } from './repo.ts';
import type { LoginBody, RegisterBody, TokenPair, User } from './schemas.ts';

const DAY_MS = 86_400_000;
export const EMAIL_TOKEN_TTL_MS = { verify_email: 7 * DAY_MS, password_reset: 3_600_000 } as const;

export interface AuthServiceDeps {
  db: Database;
  clock: Clock;
  jwt: JwtSigner;
  mailer: Mailer;
  config: Pick<Config, 'publicBaseUrl' | 'signupCreditUsd' | 'auth'>;
  users: UsersRepo;
  workspaces: Pick<WorkspacesRepo, 'insertWithOwner'>;
  wallet: Pick<WalletRepo, 'create' | 'applyEntry'>;
}

export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

export function presentUser(row: Pick<UsersTable, 'id' | 'email' | 'name'> & { email_verified_at: Date | string | null; created_at: Date | string; updated_at: Date | string }): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    email_verified: row.email_verified_at !== null,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export function createAuthService(deps: AuthServiceDeps) {
  const { db, clock, jwt, mailer, config, users } = deps;
  const invalidCredentials = () => new AppError('unauthorized', 'email or password is incorrect');

  /** Stores a single-use mailed token (hashed) and mails the link carrying it. */
  async function mailToken(executor: Executor, user: { id: string; email: string }, purpose: 'verify_email' | 'password_reset') {
    const now = clock.now();
    const token = randomToken(purpose === 'verify_email' ? 'ev_' : 'pr_');
    await executor
      .insertInto('email_tokens')
      .values({ token_hash: sha256Hex(token), user_id: user.id, purpose, created_at: now, expires_at: new Date(now.getTime() + EMAIL_TOKEN_TTL_MS[purpose]) })
      .execute();
    const link = purpose === 'verify_email' ? `${config.publicBaseUrl}/verify-email?token=${token}` : `${config.publicBaseUrl}/reset-password?token=${token}`;
    const subject = purpose === 'verify_email' ? 'Confirm your email address' : 'Reset your password';
    const text =
      purpose === 'verify_email'
        ? `Welcome! Confirm your email address by opening this link (valid 7 days):\n\n${link}\n\nOr POST the token to /v1/auth/verify-email: ${token}\n`
        : `Someone asked to reset your password. Open this link within 1 hour:\n\n${link}\n\nOr POST the token to /v1/auth/password/reset: ${token}\nIf this was not you, ignore this mail.\n`;
    return { token, send: () => mailer.send({ to: user.email, subject, text, meta: { purpose, token, link } }) };
  }

  /** Opens a session and issues its first token pair. */
  async function openSession(executor: Executor, userId: string, client: ClientInfo): Promise<TokenPair> {
    const now = clock.now();
    const sessionId = newId('ses');
    const expiresAt = new Date(now.getTime() + config.auth.refreshTokenTtlSeconds * 1000);
    await users.insertSession(executor, { id: sessionId, userId, device: client.userAgent?.slice(0, 300) ?? null, ip: client.ip, now, expiresAt });
    return issueTokens(executor, userId, sessionId, expiresAt);
  }

  /** A new access token and a new refresh token for an open session. */
  async function issueTokens(executor: Executor, userId: string, sessionId: string, expiresAt: Date): Promise<TokenPair> {
    const now = clock.now();
    const refreshToken = randomToken('rt_');
    await users.insertRefreshToken(executor, { tokenHash: sha256Hex(refreshToken), sessionId, now, expiresAt });
    return {
      access_token: await jwt.sign({ sub: userId, sid: sessionId }, now),
      refresh_token: refreshToken,
      token_type: 'Bearer',
      expires_in: jwt.ttlSeconds,
    };
  }

  return {
    mailToken,
    issueTokens,

    async register(body: RegisterBody): Promise<User> {
      const email = body.email.toLowerCase();
      if (await users.findByEmail(db, email)) throw conflict('an account with this email already exists');
      const passwordHash = await hashPassword(body.password);
      const now = clock.now();
      const { user, mail } = await db.transaction().execute(async (tx) => {
        const user = await users.insert(tx, { id: newId('usr'), email, name: body.name ?? null, password_hash: passwordHash, now });
        const workspace = await deps.workspaces.insertWithOwner(tx, { id: newId('ws'), name: `${body.name ?? email.split('@')[0]}'s workspace`, ownerId: user.id, now });
        await deps.wallet.create(tx, { workspaceId: workspace.id, now });
        const credit = usdToMicros(config.signupCreditUsd);
        if (credit > 0) {
          await deps.wallet.applyEntry(tx, { workspaceId: workspace.id, type: 'adjustment', amountMicros: credit, description: 'Signup credit', now });
        }
        return { user, mail: await mailToken(tx, user, 'verify_email') };
      });
      await mail.send();
      return presentUser(user);
    },

    async login(body: LoginBody, client: ClientInfo): Promise<TokenPair> {
      const user = await users.findByEmail(db, body.email);
      // Verify against a dummy hash for unknown emails so both failures take the same time.
      const ok = await verifyPassword(user?.password_hash ?? (await DUMMY_PASSWORD_HASH), body.password);
      if (!user || !ok) throw invalidCredentials();
      return db.transaction().execute((tx) => openSession(tx, user.id, client));
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
