import type { WorkspaceContext } from '../../platform/auth/access.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { invalidField, notFound } from '../../platform/errors.ts';
import { type PageRequest, toPage } from '../../platform/pagination.ts';
import { toE164 } from '../../platform/phone.ts';
import { createDncRepo } from './repo.ts';
import type { DncBody, DncEntry } from './schemas.ts';

// The do-not-call list of a workspace. Adding a listed number again is not an error: it answers
// the entry, and whether it was new.

type Row = { number: string; reason: string | null; created_at: Date | string };
const present = (row: Row): DncEntry => ({ number: row.number, reason: row.reason, created_at: new Date(row.created_at).toISOString() });

function e164(raw: string, path: string): string {
  const number = toE164(raw);
  if (!number) throw invalidField(path, 'must be a possible phone number (E.164, e.g. +15550100200)');
  return number;
}

export function createDncService(deps: { db: Database; clock: Clock }) {
  const repo = createDncRepo(deps.db);
  return {
    /** Newest first; the cursor is `<iso time>|<number>`. */
    async list(ctx: WorkspaceContext, page: PageRequest) {
      const rows = await repo.list(ctx.workspaceId, page);
      return toPage(rows, page, (r) => `${new Date(r.created_at).toISOString()}|${r.number}`, present);
    },

    async add(ctx: WorkspaceContext, body: DncBody): Promise<{ entry: DncEntry; created: boolean }> {
      const { row, created } = await repo.add(ctx.workspaceId, e164(body.number, 'number'), body.reason ?? null, deps.clock.now());
      return { entry: present(row), created };
    },

    /** `raw`: the number as the path gave it; 404 when it is not listed. */
    async remove(ctx: WorkspaceContext, raw: string) {
      const number = toE164(raw);
      if (!number || !(await repo.remove(ctx.workspaceId, number))) throw notFound('do-not-call entry');
    },
  };
}

export type DncService = ReturnType<typeof createDncService>;
