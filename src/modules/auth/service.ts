import type { Config } from '../../config.ts';
import type { GatePublisher } from '../../platform/auth/gate.ts';
import type { JwtSigner } from '../../platform/auth/jwt.ts';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from '../../platform/auth/passwords.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Executor } from '../../platform/db/schema.ts';
import type { UsersTable } from '../../platform/db/foundation-tables.ts';
import { AppError, conflict, invalidField, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Mailer } from '../../platform/mailer.ts';
import { usdToMicros } from '../../platform/money.ts';
import { type PageRequest, toPage } from '../../platform/pagination.ts';
import { randomToken, sha256Hex } from '../../platform/secrets.ts';
import type { WalletRepo } from '../wallet/repo.ts';
import type { WorkspacesRepo } from '../workspaces/repo.ts';
import type { UsersRepo } from './repo.ts';
import type {
  ChangePasswordBody,
  ForgotPasswordBody,
  LoginBody,
  RefreshBody,
  RegisterBody,
  ResetPasswordBody,
  Session,
  TokenPair,
  UpdateMeBody,
  User,
  VerifyEmailBody,
} from './schemas.ts';

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
  /** Told after each commit that ends a session or changes what the gate caches of a user. */
  gate: GatePublisher;
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
  const { db, clock, jwt, mailer, config, users, gate } = deps;
  const invalidCredentials = () => new AppError('unauthorized', 'email or password is incorrect');
  // One answer for unknown, expired, revoked and reused refresh tokens: the client must log in again.
  const invalidRefreshToken = () => new AppError('invalid_token', 'the refresh token is invalid, expired or revoked; log in again');
  // A wrong current password is a 422 on that field, not a 401: the access token itself is fine,
  // and clients treat a 401 as "log in again".
  const wrongPassword = () => invalidField('current_password', 'is incorrect');
  const badMailedToken = () => invalidField('token', 'is invalid, expired or already used');

  /** A notice to the account's address after a security-relevant change (no token in it). */
  const notify = (to: string, purpose: string, subject: string, text: string) => mailer.send({ to, subject, text, meta: { purpose } });

  async function currentUser(userId: string) {
    const user = await users.findById(db, userId);
    // The gate has just read this user; a missing row means it was deleted in between.
    if (!user) throw new AppError('invalid_token', 'the user of this access token no longer exists');
    return user;
  }

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

    /**
     * Rotates a refresh token: the presented one is marked used and a new pair is issued in the
     * same session (which keeps its absolute expiry). Presenting a used token again means it
     * leaked: the whole session is revoked (RFC 9700 section 4.14.2).
     */
    async refresh(body: RefreshBody): Promise<TokenPair> {
      const tokenHash = sha256Hex(body.refresh_token);
      const outcome = await db.transaction().execute(async (tx): Promise<{ pair: TokenPair } | { error: 'invalid' } | { error: 'reused'; sessionId: string }> => {
        const now = clock.now();
        const row = await users.findRefreshToken(tx, tokenHash);
        if (!row) return { error: 'invalid' };
        if (row.session_revoked_at !== null || new Date(row.session_expires_at) <= now || new Date(row.expires_at) <= now) {
          return { error: 'invalid' };
        }
        // The conditional update decides between two concurrent uses of the same token.
        const claimed = row.used_at === null ? await users.claimRefreshToken(tx, tokenHash, now) : undefined;
        if (!claimed) {
          await users.revokeSession(tx, row.user_id, row.session_id, now, 'refresh_token_reuse');
          return { error: 'reused', sessionId: row.session_id };
        }
        await users.touchSession(tx, row.session_id, now);
        return { pair: await issueTokens(tx, row.user_id, row.session_id, new Date(row.session_expires_at)) };
      });
      // Thrown after the commit, so a reuse's revocation is kept.
      if ('error' in outcome) {
        if (outcome.error === 'reused') await gate.publish([{ kind: 'session', id: outcome.sessionId }]);
        throw invalidRefreshToken();
      }
      return outcome.pair;
    },

    async logout(userId: string, sessionId: string): Promise<void> {
      await users.revokeSession(db, userId, sessionId, clock.now(), 'logout');
      await gate.publish([{ kind: 'session', id: sessionId }]);
    },

    async me(userId: string): Promise<User> {
      return presentUser(await currentUser(userId));
    },

    /**
     * Changes the name and/or the email. A new email needs the current password, becomes
     * unverified, gets a verification mail, spends the mailed tokens sent to the old address,
     * and the old address is told of the change.
     */
    async updateMe(userId: string, body: UpdateMeBody): Promise<User> {
      const user = await currentUser(userId);
      const email = body.email?.toLowerCase();
      const emailChanges = email !== undefined && email !== user.email;
      if (emailChanges) {
        if (body.current_password === undefined) throw invalidField('current_password', 'is required to change the email address');
        if (!(await verifyPassword(user.password_hash, body.current_password))) throw wrongPassword();
        if (await users.findByEmail(db, email)) throw conflict('an account with this email already exists');
      }
      if (!emailChanges && body.name === undefined) return presentUser(user);
      const now = clock.now();
      const { updated, mail } = await db.transaction().execute(async (tx) => {
        const updated = await users.update(tx, userId, {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(emailChanges ? { email, email_verified_at: null } : {}),
          now,
        });
        if (!emailChanges) return { updated, mail: undefined };
        await users.spendEmailTokens(tx, userId, ['verify_email', 'password_reset'], now);
        return { updated, mail: await mailToken(tx, updated, 'verify_email') };
      });
      // The gate keeps the user's email and name with their sessions.
      await gate.publish([{ kind: 'user', id: userId }]);
      if (mail) {
        await mail.send();
        await notify(
          user.email,
          'email_changed',
          'Your email address was changed',
          `The email address of your account was changed from ${user.email} to ${updated.email}.\nIf this was not you, reset your password and contact support.\n`,
        );
      }
      return presentUser(updated);
    },

    /** Changes the password and ends every other session of the user. */
    async changePassword(userId: string, sessionId: string, body: ChangePasswordBody): Promise<void> {
      const user = await currentUser(userId);
      if (!(await verifyPassword(user.password_hash, body.current_password))) throw wrongPassword();
      const passwordHash = await hashPassword(body.new_password);
      await db.transaction().execute(async (tx) => {
        const now = clock.now();
        await users.update(tx, userId, { password_hash: passwordHash, now });
        await users.revokeAllSessions(tx, userId, now, 'password_changed', sessionId);
        await users.spendEmailTokens(tx, userId, ['password_reset'], now);
      });
      await gate.publish([{ kind: 'user', id: userId }]);
      await notify(user.email, 'password_changed', 'Your password was changed', 'The password of your account was changed and your other sessions were signed out.\nIf this was not you, reset your password now.\n');
    },

    /** Mails a reset token when the address has an account; the caller cannot tell either way. */
    async forgotPassword(body: ForgotPasswordBody): Promise<void> {
      const user = await users.findByEmail(db, body.email);
      if (!user) return;
      const mail = await mailToken(db, user, 'password_reset');
      await mail.send();
    },

    /** Sets a new password with a mailed token and ends every session of the user. */
    async resetPassword(body: ResetPasswordBody): Promise<void> {
      const tokenHash = sha256Hex(body.token);
      // Checked before the (slow) hashing so a bad token costs little; claimed again below.
      const token = await users.findEmailToken(db, tokenHash, 'password_reset');
      if (!token || token.used_at !== null || new Date(token.expires_at) <= clock.now()) throw badMailedToken();
      const passwordHash = await hashPassword(body.new_password);
      const user = await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const claimed = await users.claimEmailToken(tx, tokenHash, 'password_reset', now);
        if (!claimed) return undefined;
        await users.update(tx, claimed.user_id, { password_hash: passwordHash, now });
        // The token came through the mailbox, which proves the address too.
        const user = await users.markEmailVerified(tx, claimed.user_id, now);
        await users.revokeAllSessions(tx, claimed.user_id, now, 'password_reset');
        await users.spendEmailTokens(tx, claimed.user_id, ['password_reset'], now);
        return user;
      });
      if (!user) throw badMailedToken();
      await gate.publish([{ kind: 'user', id: user.id }]);
      await notify(user.email, 'password_changed', 'Your password was reset', 'The password of your account was reset and every session was signed out.\nIf this was not you, contact support.\n');
    },

    async verifyEmail(body: VerifyEmailBody): Promise<User> {
      const user = await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const claimed = await users.claimEmailToken(tx, sha256Hex(body.token), 'verify_email', now);
        return claimed ? users.markEmailVerified(tx, claimed.user_id, now) : undefined;
      });
      if (!user) throw badMailedToken();
      return presentUser(user);
    },

    /** Mails a new verification token; earlier ones stay valid until they expire. */
    /** Returns the address mailed. */
    async resendVerification(userId: string): Promise<string> {
      const user = await currentUser(userId);
      if (user.email_verified_at !== null) throw conflict('the email address is already verified');
      const mail = await mailToken(db, user, 'verify_email');
      await mail.send();
      return user.email;
    },

    async listSessions(userId: string, currentSessionId: string, page: PageRequest) {
      const rows = await users.listActiveSessions(db, userId, clock.now(), page);
      return toPage(rows, page, (row) => row.id, (row): Session => ({
        id: row.id,
        device: row.device,
        ip: row.ip,
        created_at: new Date(row.created_at).toISOString(),
        last_used_at: new Date(row.last_used_at).toISOString(),
        current: row.id === currentSessionId,
      }));
    },

    async revokeSession(userId: string, sessionId: string): Promise<void> {
      // Another user's session, an unknown id and an ended session are all simply not found.
      const revoked = await users.revokeSession(db, userId, sessionId, clock.now(), 'revoked_by_user');
      if (!revoked) throw notFound('session');
      await gate.publish([{ kind: 'session', id: sessionId }]);
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
