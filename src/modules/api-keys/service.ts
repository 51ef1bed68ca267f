import type { WorkspaceContext } from '../../platform/auth/access.ts';
import { generateApiKey } from '../../platform/auth/api-key-format.ts';
import type { GatePublisher } from '../../platform/auth/gate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { type Page, pageRequest, toPage } from '../../platform/pagination.ts';
import type { ApiKeyRow, ApiKeysRepo } from './repo.ts';
import type { ApiKey, ApiKeyCreate, ApiKeyListQuery, ApiKeyUpdate, ApiKeyWithSecret } from './schemas.ts';

// API keys of a workspace: created with a user's JWT (owner/admin), shown once, stored as
// SHA-256, revoked at once. The request gate keeps verified keys in memory (gate-cache.ts): a
// revocation or rename tells it after the commit, and every instance drops the key before the
// request returns, so the key's next request is a 401 on every instance.

export interface ApiKeysServiceDeps {
  db: Database;
  clock: Clock;
  apiKeys: ApiKeysRepo;
  gate: GatePublisher;
}

const iso = (value: Date | string) => new Date(value).toISOString();

export function presentApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    scope: row.scope,
    prefix: row.prefix,
    last4: row.last4,
    created_at: iso(row.created_at),
    last_used_at: row.last_used_at ? iso(row.last_used_at) : null,
    last_used_ip: row.last_used_ip,
    revoked_at: row.revoked_at ? iso(row.revoked_at) : null,
  };
}

export function createApiKeysService(deps: ApiKeysServiceDeps) {
  const { db, clock, apiKeys, gate } = deps;

  return {
    async create(ctx: WorkspaceContext, body: ApiKeyCreate): Promise<ApiKeyWithSecret> {
      const generated = generateApiKey();
      const row = await apiKeys.insert(db, {
        id: newId('key'),
        workspaceId: ctx.workspaceId,
        name: body.name,
        scope: body.scope,
        keyHash: generated.hash,
        prefix: generated.prefix,
        last4: generated.last4,
        createdBy: ctx.userId ?? null,
        now: clock.now(),
      });
      return { ...presentApiKey(row), key: generated.key };
    },

    async list(ctx: WorkspaceContext, query: ApiKeyListQuery): Promise<Page<ApiKey>> {
      const page = pageRequest(query);
      const rows = await apiKeys.list(db, ctx.workspaceId, page);
      return toPage(rows, page, (row) => row.id, presentApiKey);
    },

    async get(ctx: WorkspaceContext, id: string): Promise<ApiKey> {
      const row = await apiKeys.find(db, ctx.workspaceId, id);
      if (!row) throw notFound('API key');
      return presentApiKey(row);
    },

    async update(ctx: WorkspaceContext, id: string, body: ApiKeyUpdate): Promise<ApiKey> {
      const row = await apiKeys.rename(db, ctx.workspaceId, id, body.name);
      if (!row) throw notFound('API key');
      // The gate keeps the key's name (the audit trail's actor name).
      await gate.publish([{ kind: 'key', id }]);
      return presentApiKey(row);
    },

    async revoke(ctx: WorkspaceContext, id: string): Promise<void> {
      const row = await apiKeys.revoke(db, ctx.workspaceId, id, clock.now());
      if (!row) throw notFound('API key');
      await gate.publish([{ kind: 'key', id }]);
    },
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
