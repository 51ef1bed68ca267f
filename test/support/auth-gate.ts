import Fastify, { type FastifyBaseLogger, type FastifyInstance, type InjectOptions } from 'fastify';
import pino from 'pino';
import { createAuditWriter } from '../../src/platform/audit.ts';
import type { Access, Role, Scope } from '../../src/platform/auth/access.ts';
import { createApiKeyUsageRecorder } from '../../src/platform/auth/api-key-usage.ts';
import { registerAuthentication, userOf, workspaceOf } from '../../src/platform/auth/authenticate.ts';
import { createGate } from '../../src/platform/auth/gate.ts';
import { createJwtSigner } from '../../src/platform/auth/jwt.ts';
import { manualClock } from '../../src/platform/clock.ts';
import type { Database } from '../../src/platform/db/schema.ts';
import { registerErrorHandling } from '../../src/platform/http/error-handler.ts';
import { createRateLimiter } from '../../src/platform/rate-limit.ts';
import { closeAtEnd } from './cleanup.ts';
import { testDatabase } from './database.ts';
import { insertApiKey, insertMembership, insertSession, insertUser, insertWorkspace } from './rows.ts';

// The request gate (src/platform/auth/authenticate.ts) on a small in-process Fastify app, with the
// real database, JWT signer, in-memory rate limiter, gate cache, audit writer and key-use recorder,
// and a manual clock; rows are inserted directly. Used by the gate's rule tests
// (authenticate-rules.test.ts, authenticate-scopes.test.ts), which must run in seconds.

/** Distinct per bucket, so a response's RateLimit-Limit names the bucket it was counted in. */
export const LIMITS = { principalPerMin: 20, ipPerMin: 12, demoPerMin: 3 };

const silent = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

/** Every route of the probe app: its access (none for `/open/*`) and what its handler calls. */
const ROUTES: Array<{ method: 'GET' | 'POST'; url: string; access?: Access; calls?: 'workspaceOf' | 'userOf' }> = [
  { method: 'GET', url: '/open' },
  { method: 'GET', url: '/open/workspace', calls: 'workspaceOf' },
  { method: 'GET', url: '/public/default', access: { auth: 'public' } },
  { method: 'GET', url: '/public/ip', access: { auth: 'public', limit: 'ip' } },
  { method: 'GET', url: '/public/demo', access: { auth: 'public', limit: 'demo' } },
  { method: 'GET', url: '/public/none', access: { auth: 'public', limit: 'none' } },
  { method: 'GET', url: '/public/user', access: { auth: 'public' }, calls: 'userOf' },
  { method: 'GET', url: '/me', access: { auth: 'user' }, calls: 'userOf' },
  { method: 'GET', url: '/ws/read', access: { auth: 'workspace', scope: 'read-only' }, calls: 'workspaceOf' },
  { method: 'POST', url: '/ws/read', access: { auth: 'workspace', scope: 'read-only' }, calls: 'workspaceOf' },
  { method: 'GET', url: '/ws/write', access: { auth: 'workspace', scope: 'write' }, calls: 'workspaceOf' },
  { method: 'POST', url: '/ws/write', access: { auth: 'workspace', scope: 'write' }, calls: 'workspaceOf' },
  { method: 'GET', url: '/ws/admin', access: { auth: 'workspace', scope: 'admin' }, calls: 'workspaceOf' },
  { method: 'POST', url: '/ws/user-only', access: { auth: 'workspace', scope: 'write', userOnly: true }, calls: 'workspaceOf' },
  { method: 'GET', url: '/ws/user', access: { auth: 'workspace', scope: 'read-only' }, calls: 'userOf' },
  { method: 'GET', url: '/ws/signed', access: { auth: 'workspace', scope: 'read-only', signedLink: true } },
  { method: 'GET', url: '/workspaces/:id/things', access: { auth: 'workspace', scope: 'read-only', workspaceParam: 'id' }, calls: 'workspaceOf' },
  { method: 'POST', url: '/workspaces/:id/user-only', access: { auth: 'workspace', scope: 'write', userOnly: true, workspaceParam: 'id' }, calls: 'workspaceOf' },
  // A route whose workspaceParam names no parameter of its path.
  { method: 'GET', url: '/misnamed/:id', access: { auth: 'workspace', scope: 'read-only', workspaceParam: 'workspace' }, calls: 'workspaceOf' },
];

export type GateApp = Awaited<ReturnType<typeof gateApp>>;

/**
 * The probe app. Each response carries `x-test-workspace`: the request's workspace context as the
 * gate left it (JSON, `null` when unset), read in onSend as the audit trail reads it, so a refused
 * request shows it too. A request's `x-test-traceparent` header becomes its `request.traceParent`,
 * as platform/telemetry/http.ts sets it in an earlier onRequest hook.
 */
export async function gateApp() {
  const database = await testDatabase();
  const db = database.db;
  const clock = manualClock();
  const jwt = createJwtSigner('the gate rules test secret, long enough for HS256', 3600);
  const rateLimiter = createRateLimiter(LIMITS);
  const gate = createGate({ database, clock, logger: silent, ttlSeconds: 60 });
  await gate.ready();
  const keyUsage = createApiKeyUsageRecorder({ db, clock, audit: createAuditWriter({ db, clock }) });
  const app: FastifyInstance = Fastify({ logger: false });
  registerErrorHandling(app);
  app.decorateRequest('traceParent', undefined);
  app.addHook('onRequest', async (request) => {
    const traceParent = request.headers['x-test-traceparent'];
    if (typeof traceParent === 'string') request.traceParent = traceParent;
  });
  registerAuthentication(app, { db, jwt, clock, rateLimiter, keyUsage, gate });
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-test-workspace', JSON.stringify(request.workspace));
    return payload;
  });
  for (const route of ROUTES) {
    app.route({
      method: route.method,
      url: route.url,
      config: route.access ? { access: route.access } : {},
      handler: async (request) => ({
        principal: request.principal,
        signedLink: request.signedLink,
        requestId: String(request.id),
        ...(route.calls === 'workspaceOf' ? { workspace: workspaceOf(request) } : {}),
        ...(route.calls === 'userOf' ? { user: userOf(request) } : {}),
      }),
    });
  }
  await app.ready();
  closeAtEnd(async () => {
    await app.close();
    await keyUsage.flush();
    await gate.close();
  });
  return { app, db, clock, jwt, gate, keyUsage, ...fixtures(db, clock, jwt) };
}

let ipCount = 0;
/** A client address of its own, so a test's IP bucket starts full. */
export const freshIp = () => `10.0.${Math.floor(++ipCount / 250)}.${(ipCount % 250) + 1}`;

export interface Caller {
  token?: string;
  /** The whole Authorization header, when not `Bearer <token>`. */
  authorization?: string;
  ip?: string;
  headers?: Record<string, string>;
}

export function request(app: FastifyInstance, method: 'GET' | 'POST' | 'HEAD', url: string, caller: Caller = {}) {
  const headers: Record<string, string> = { ...caller.headers };
  if (caller.authorization !== undefined) headers.authorization = caller.authorization;
  else if (caller.token !== undefined) headers.authorization = `Bearer ${caller.token}`;
  const options: InjectOptions = { method, url, headers, remoteAddress: caller.ip ?? freshIp() };
  return app.inject(options);
}

/** Rows inserted directly (test/support/rows.ts), each test making its own, at the clock's now. */
function fixtures(db: Database, clock: ReturnType<typeof manualClock>, jwt: ReturnType<typeof createJwtSigner>) {
  const user = (name: string | null = 'Ada Gate') => insertUser(db, clock.now(), { name });
  const session = (userId: string, options: { expiresAt?: Date; lastUsedAt?: Date; revokedAt?: Date } = {}) => insertSession(db, userId, clock.now(), options);
  /** An access token for the session, signed now; `sub` may name another user. */
  const token = (sub: string, sid: string) => jwt.sign({ sub, sid }, clock.now());
  const workspace = (id?: string) => insertWorkspace(db, clock.now(), { id });
  const member = (workspaceId: string, userId: string, role: Role = 'owner', createdAt = clock.now()) => insertMembership(db, workspaceId, userId, role, createdAt);
  const apiKey = (workspaceId: string, scope: Scope, options: { key?: string; revokedAt?: Date } = {}) => insertApiKey(db, workspaceId, scope, clock.now(), options);
  /** A user with an open session, its access token, and a workspace they hold `role` in. */
  async function tenant(role: Role = 'owner') {
    const owner = await user();
    const sessionId = await session(owner.id);
    const workspaceId = await workspace();
    await member(workspaceId, owner.id, role);
    return { ...owner, sessionId, workspaceId, token: await token(owner.id, sessionId) };
  }
  return { user, session, token, workspace, member, apiKey, tenant };
}
