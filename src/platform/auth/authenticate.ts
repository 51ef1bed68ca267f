import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Database } from '../db/schema.ts';
import { AppError, forbidden, notFound } from '../errors.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { sha256Hex } from '../secrets.ts';
import { type Access, type Principal, ROLE_SCOPE, scopeAllows, type WorkspaceContext } from './access.ts';
import { isWellFormedApiKey, looksLikeApiKey } from './api-key-format.ts';
import type { ApiKeyUsageRecorder } from './api-key-usage.ts';
import type { Gate } from './gate.ts';
import type { KeyVerdict, MembershipVerdict, SessionVerdict } from './gate-cache.ts';
import type { JwtSigner } from './jwt.ts';

// The request gate, run as onRequest (before the body is read, so an unauthenticated request
// is a 401 whatever its body): authenticate, count the request against the caller's rate-limit
// bucket, resolve the workspace, check the scope.

export interface AuthenticationDeps {
  db: Database;
  jwt: JwtSigner;
  clock: Clock;
  rateLimiter: RateLimiter;
  keyUsage: ApiKeyUsageRecorder;
  gate: Pick<Gate, 'cache'>;
}

const BEARER = /^Bearer\s+(\S+)$/i;
const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Bearer' };

function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const match = header ? BEARER.exec(header) : null;
  if (!match) {
    throw new AppError('unauthorized', 'send Authorization: Bearer <access token or API key>', { headers: WWW_AUTHENTICATE });
  }
  return match[1];
}

export function registerAuthentication(app: FastifyInstance, deps: AuthenticationDeps) {
  const { db, jwt, clock, rateLimiter, keyUsage } = deps;
  const cache = deps.gate.cache;

  async function limit(reply: FastifyReply, bucket: 'principal' | 'ip' | 'demo', key: string) {
    const result = await rateLimiter.consume(bucket, key);
    reply.headers(result.headers);
    if (!result.allowed) {
      throw new AppError('rate_limited', `rate limit of ${result.limit} requests per minute exceeded; retry after ${result.resetSeconds} s`);
    }
  }

  const invalidKey = () => new AppError('unauthorized', 'the API key is invalid or revoked', { headers: WWW_AUTHENTICATE });
  const endedSession = () =>
    new AppError('invalid_token', 'the session of this access token has ended; log in again', {
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    });

  /** The key's verdict: from the cache, else one indexed lookup by hash (kept when valid). */
  async function keyVerdict(hash: string): Promise<KeyVerdict | undefined> {
    const cached = cache.key(hash);
    if (cached) return cached;
    const since = cache.generation;
    const row = await db
      .selectFrom('api_keys')
      .select(['id', 'name', 'workspace_id', 'scope', 'revoked_at'])
      .where('key_hash', '=', hash)
      .executeTakeFirst();
    if (!row || row.revoked_at) return undefined;
    const verdict: KeyVerdict = { id: row.id, name: row.name, workspaceId: row.workspace_id, scope: row.scope };
    cache.putKey(hash, verdict, since);
    return verdict;
  }

  async function apiKeyPrincipal(request: FastifyRequest, token: string): Promise<Principal & { type: 'api_key' }> {
    if (!isWellFormedApiKey(token)) throw invalidKey();
    const key = await keyVerdict(sha256Hex(token));
    if (!key) throw invalidKey();
    keyUsage.noteUse({ keyId: key.id, keyName: key.name, workspaceId: key.workspaceId, ip: request.ip, userAgent: request.headers['user-agent'] ?? null, requestId: String(request.id) });
    return { type: 'api_key', keyId: key.id, keyName: key.name, workspaceId: key.workspaceId, scope: key.scope };
  }

  /** The session's verdict (open, with its user): from the cache, else one join (kept when open). */
  async function sessionVerdict(sessionId: string, now: Date): Promise<SessionVerdict | undefined> {
    const cached = cache.session(sessionId);
    if (cached) return cached;
    const since = cache.generation;
    const row = await db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .select(['sessions.id as session_id', 'sessions.revoked_at', 'sessions.expires_at', 'users.id as user_id', 'users.email', 'users.name'])
      .where('sessions.id', '=', sessionId)
      .executeTakeFirst();
    if (!row || row.revoked_at || new Date(row.expires_at) <= now) return undefined;
    const verdict: SessionVerdict = { sessionId: row.session_id, userId: row.user_id, email: row.email, name: row.name, expiresAtMs: new Date(row.expires_at).getTime() };
    cache.putSession(verdict, since);
    return verdict;
  }

  async function userPrincipal(token: string): Promise<Principal & { type: 'user' }> {
    const now = clock.now();
    const claims = await jwt.verify(token, now);
    const session = await sessionVerdict(claims.sid, now);
    if (!session || session.userId !== claims.sub || session.expiresAtMs <= now.getTime()) throw endedSession();
    keyUsage.noteSession(session.sessionId);
    return { type: 'user', userId: session.userId, sessionId: session.sessionId, email: session.email, name: session.name };
  }

  /** The user's membership of the workspace asked for (undefined: their first workspace). */
  async function membershipVerdict(userId: string, requested: string | undefined): Promise<MembershipVerdict | undefined> {
    const cached = cache.membership(userId, requested);
    if (cached) return cached;
    const since = cache.generation;
    let query = db.selectFrom('memberships').select(['workspace_id', 'role']).where('user_id', '=', userId);
    query = requested !== undefined
      ? query.where('workspace_id', '=', requested)
      : query.orderBy('created_at', 'asc').orderBy('workspace_id', 'asc').limit(1);
    const row = await query.executeTakeFirst();
    if (!row) return undefined;
    const verdict: MembershipVerdict = { userId, workspaceId: row.workspace_id, role: row.role };
    cache.putMembership(requested, verdict, since);
    return verdict;
  }

  async function workspaceFor(request: FastifyRequest, principal: Principal, fromParam: string | undefined): Promise<WorkspaceContext> {
    if (principal.type === 'api_key') {
      if (fromParam !== undefined && fromParam !== principal.workspaceId) throw notFound('workspace');
      return { workspaceId: principal.workspaceId, scope: principal.scope, actor: { type: 'api_key', id: principal.keyId, name: principal.keyName } };
    }
    const asked = fromParam ?? request.headers['x-workspace-id'];
    const requested = typeof asked === 'string' && asked !== '' ? asked : undefined;
    const membership = await membershipVerdict(principal.userId, requested);
    if (!membership) throw notFound('workspace');
    return {
      workspaceId: membership.workspaceId,
      scope: ROLE_SCOPE[membership.role],
      role: membership.role,
      userId: principal.userId,
      actor: { type: 'user', id: principal.userId, name: principal.email },
    };
  }

  app.decorateRequest('principal', null);
  app.decorateRequest('workspace', null);
  app.decorateRequest('signedLink', false);

  app.addHook('onRequest', async (request, reply) => {
    const access: Access | undefined = request.routeOptions.config?.access;
    if (!access) return;
    if (access.auth === 'public') {
      const bucket = access.limit ?? 'ip';
      if (bucket !== 'none') await limit(reply, bucket === 'demo' ? 'demo' : 'ip', request.ip);
      return;
    }
    if (access.auth === 'workspace' && access.signedLink) {
      const query = request.query as Record<string, unknown> | undefined;
      if (query && (query.signature !== undefined || query.expires !== undefined)) {
        await limit(reply, 'ip', request.ip);
        request.signedLink = true;
        return;
      }
    }
    let principal: Principal;
    try {
      const token = bearerToken(request);
      principal = looksLikeApiKey(token) ? await apiKeyPrincipal(request, token) : await userPrincipal(token);
    } catch (error) {
      // A failed authentication has no principal to charge: it counts against the client's IP
      // (the public bucket), so guessing keys or tokens is limited like any anonymous traffic.
      if (error instanceof AppError && error.status === 401) await limit(reply, 'ip', request.ip);
      throw error;
    }
    request.principal = principal;
    // Counted as soon as the caller is known, so a refused request (403, 404) counts too and
    // carries the RateLimit-* headers like every other response of a limited route.
    await limit(reply, 'principal', principal.type === 'user' ? principal.userId : principal.keyId);
    const userOnly = 'this operation needs a user access token (JWT), not an API key';
    if (access.auth === 'user') {
      if (principal.type === 'api_key') throw forbidden(userOnly);
      return;
    }
    // onRequest runs before Fastify validates params, but it has already matched and parsed them.
    const params = request.params as Record<string, string> | undefined;
    const fromParam = access.workspaceParam ? (params?.[access.workspaceParam] ?? '') : undefined;
    // A path naming the empty workspace (`/workspaces//…`, or a workspaceParam that names no path
    // parameter) names none, not "the caller's first"; no workspace id holds U+0000 either (and the
    // database refuses one): not found, before any query.
    if (fromParam === '' || fromParam?.includes('\u0000')) throw new AppError('not_found', 'workspace not found');
    if (principal.type === 'api_key' && access.userOnly) {
      // Refused whatever workspace it names; in its own workspace the attempt is audited.
      if (fromParam === undefined || fromParam === principal.workspaceId) request.workspace = await workspaceFor(request, principal, fromParam);
      throw forbidden(userOnly);
    }
    const workspace = await workspaceFor(request, principal, fromParam);
    if (request.traceParent) workspace.traceParent = request.traceParent;
    // Set before the scope check, so a refused write is in the workspace's audit trail too.
    request.workspace = workspace;
    const readOnlyMethod = request.method === 'GET' || request.method === 'HEAD';
    if (!scopeAllows(workspace.scope, access.scope) || (workspace.scope === 'read-only' && !readOnlyMethod)) {
      throw new AppError('insufficient_scope', `this operation needs the ${access.scope} scope; the caller has ${workspace.scope}`);
    }
  });
}

/** The workspace context of a workspace route; the gate has set it. */
export function workspaceOf(request: FastifyRequest): WorkspaceContext {
  if (!request.workspace) throw new AppError('internal', 'route has no workspace context');
  return request.workspace;
}

/** The user principal of a user route; the gate has set it. */
export function userOf(request: FastifyRequest): Principal & { type: 'user' } {
  const principal = request.principal;
  if (principal?.type !== 'user') throw forbidden('this operation needs a user access token (JWT)');
  return principal;
}
