import { generateApiKey } from '../../src/platform/auth/api-key-format.ts';
import type { Role, Scope } from '../../src/platform/auth/access.ts';
import type { Executor } from '../../src/platform/db/schema.ts';
import { newId } from '../../src/platform/ids.ts';
import { sha256Hex } from '../../src/platform/secrets.ts';

// The account rows written straight into the database, for rule tests that need a workspace, a
// user, a membership, a session or an API key without the HTTP API: one writer of each, shared by
// the gate's rig (auth-gate.ts), the campaigns' rows (campaign-rows.ts) and the rule tests.

/** A user (no password that verifies), created at `now`; its email is unique. */
export async function insertUser(db: Executor, now: Date, fields: { name?: string | null; email?: string } = {}) {
  const id = newId('usr');
  const email = fields.email ?? `${id}@example.test`;
  const name = fields.name === undefined ? null : fields.name;
  await db.insertInto('users').values({ id, email, name, password_hash: 'not a hash', created_at: now, updated_at: now }).execute();
  return { id, email, name };
}

/** A workspace created at `now`. */
export async function insertWorkspace(db: Executor, now: Date, fields: { id?: string; name?: string } = {}) {
  const id = fields.id ?? newId('ws');
  await db.insertInto('workspaces').values({ id, name: fields.name ?? `workspace ${id}`, created_at: now, updated_at: now }).execute();
  return id;
}

export async function insertMembership(db: Executor, workspaceId: string, userId: string, role: Role, createdAt: Date) {
  await db.insertInto('memberships').values({ workspace_id: workspaceId, user_id: userId, role, created_at: createdAt, updated_at: createdAt }).execute();
}

/** A session of `userId` opened at `now`, used at `lastUsedAt` (default `now`), open a day unless told. */
export async function insertSession(db: Executor, userId: string, now: Date, options: { expiresAt?: Date; lastUsedAt?: Date; revokedAt?: Date } = {}) {
  const id = newId('ses');
  await db
    .insertInto('sessions')
    .values({
      id,
      user_id: userId,
      created_at: now,
      last_used_at: options.lastUsedAt ?? now,
      expires_at: options.expiresAt ?? new Date(now.getTime() + 86_400_000),
      revoked_at: options.revokedAt ?? null,
    })
    .execute();
  return id;
}

/** An API key of the workspace, stored as the platform stores one (its SHA-256); `key` is the secret. */
export async function insertApiKey(db: Executor, workspaceId: string, scope: Scope, now: Date, options: { key?: string; name?: string; revokedAt?: Date } = {}) {
  const key = options.key ?? generateApiKey().key;
  const id = newId('key');
  const name = options.name ?? `${scope} key`;
  await db
    .insertInto('api_keys')
    .values({ id, workspace_id: workspaceId, name, scope, key_hash: sha256Hex(key), prefix: key.slice(0, 7), last4: key.slice(-4), created_at: now, revoked_at: options.revokedAt ?? null })
    .execute();
  return { id, key, name, workspaceId, scope };
}
