// How a route states who may call it. Every route under /v1 declares `config.access`;
// the app refuses to start when one does not (enforceRouteConventions in platform/http/openapi.ts).

export const SCOPES = ['read-only', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const ROLE_SCOPE: Record<Role, Scope> = { owner: 'admin', admin: 'admin', member: 'write', viewer: 'read-only' };

const SCOPE_RANK: Record<Scope, number> = { 'read-only': 0, write: 1, admin: 2 };
export const scopeAllows = (held: Scope, needed: Scope) => SCOPE_RANK[held] >= SCOPE_RANK[needed];

export type Access =
  /** No credentials. `limit` picks the bucket: per-IP (default), the demo bucket, or none (health, provider webhooks). */
  | { auth: 'public'; limit?: 'ip' | 'demo' | 'none' }
  /** A user's own routes (/auth/me, sessions, password, workspace list): a user JWT; an API key is 403. */
  | { auth: 'user' }
  /**
   * Acts in one workspace: a JWT (workspace from X-Workspace-Id, else the user's first) or an API key.
   * `scope` is the least scope the caller needs; `userOnly` refuses API keys (403 forbidden).
   * `workspaceParam` names a path parameter that holds the workspace id (`/workspaces/{id}/...`):
   * the caller must belong to that workspace (else 404), whatever X-Workspace-Id says.
   * `signedLink`: a request carrying `?expires=&signature=` passes the gate without credentials
   * (limited per IP, `request.signedLink` set, no workspace): the route itself must verify the
   * signature; without those parameters the route needs credentials like any other.
   */
  | { auth: 'workspace'; scope: Scope; userOnly?: boolean; workspaceParam?: string; signedLink?: boolean };

export type Principal =
  | { type: 'user'; userId: string; sessionId: string; email: string; name: string | null }
  | { type: 'api_key'; keyId: string; keyName: string; workspaceId: string; scope: Scope };

/** The caller acting in a workspace: what services receive as their first argument. */
export interface WorkspaceContext {
  workspaceId: string;
  scope: Scope;
  actor: { type: 'user' | 'api_key'; id: string; name: string | null };
  /** Set when the caller is a user (JWT). */
  userId?: string;
  role?: Role;
  /**
   * Tracing on and the request's span recorded: its W3C traceparent, passed by services to what
   * they queue or emit (a call, an event) so that it joins the request's trace.
   */
  traceParent?: string;
}

export interface AuditConfig {
  /** Path parameter naming the resource (default `id`). */
  resourceParam?: string;
  /** Do not record this route (for example the key-use rows themselves). */
  skip?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
    audit?: AuditConfig;
  }
  interface FastifyRequest {
    principal: Principal | null;
    workspace: WorkspaceContext | null;
    /** A handler that creates a resource sets this so the audit row names it. */
    auditResourceId?: string;
    /** The request came through a signed link (see Access.signedLink): the route verifies it. */
    signedLink: boolean;
    /** The W3C traceparent of the request's span, when tracing records it (platform/telemetry/http.ts). */
    traceParent?: string;
  }
}
