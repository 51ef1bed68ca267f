import type { AuditWriter } from '../audit.ts';
import type { Clock } from '../clock.ts';
import type { Database } from '../db/schema.ts';

// Bookkeeping of credential use, kept off the request's critical path: an API key's
// last_used_at/last_used_ip and its "used" audit row are written at most once a minute per key,
// a session's last_used_at at most once a minute. The UPDATE's own condition makes the
// once-a-minute rule hold across instances; the in-memory map only saves queries.

const MINUTE_MS = 60_000;

export interface KeyUse {
  keyId: string;
  keyName: string;
  workspaceId: string;
  ip: string;
  userAgent: string | null;
  requestId: string;
}

export function createApiKeyUsageRecorder(deps: { db: Database; clock: Clock; audit: AuditWriter; onError?: (error: unknown) => void }) {
  const lastWrite = new Map<string, number>();
  const pending = new Set<Promise<void>>();

  function due(id: string): boolean {
    const now = deps.clock.now().getTime();
    const last = lastWrite.get(id);
    if (last !== undefined && now - last < MINUTE_MS) return false;
    lastWrite.set(id, now);
    if (lastWrite.size > 50_000) lastWrite.clear();
    return true;
  }

  function track(work: Promise<void>) {
    const p = work.catch((error) => deps.onError?.(error)).finally(() => pending.delete(p));
    pending.add(p);
  }

  return {
    noteUse(use: KeyUse) {
      if (!due(use.keyId)) return;
      track(
        (async () => {
          const now = deps.clock.now();
          const cutoff = new Date(now.getTime() - MINUTE_MS);
          const updated = await deps.db
            .updateTable('api_keys')
            .set({ last_used_at: now, last_used_ip: use.ip })
            .where('id', '=', use.keyId)
            .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', cutoff)]))
            .returning('id')
            .executeTakeFirst();
          if (!updated) {
            // Another instance wrote within the minute: count this instance's minute from that
            // write, not from this attempt, so the next first-use-in-a-minute is not missed.
            const row = await deps.db.selectFrom('api_keys').select('last_used_at').where('id', '=', use.keyId).executeTakeFirst();
            if (row?.last_used_at) lastWrite.set(use.keyId, new Date(row.last_used_at).getTime());
            return;
          }
          await deps.audit.write({
            workspaceId: use.workspaceId,
            actorType: 'api_key',
            actorId: use.keyId,
            actorName: use.keyName,
            action: 'api_key.used',
            method: '-',
            route: '-',
            resourceId: use.keyId,
            statusCode: 0,
            ip: use.ip,
            userAgent: use.userAgent,
            requestId: use.requestId,
          });
        })(),
      );
    },
    noteSession(sessionId: string) {
      if (!due(sessionId)) return;
      track(
        deps.db
          .updateTable('sessions')
          .set({ last_used_at: deps.clock.now() })
          .where('id', '=', sessionId)
          .where('last_used_at', '<', new Date(deps.clock.now().getTime() - MINUTE_MS))
          .execute()
          .then(() => undefined),
      );
    },
    /** Waits for the bookkeeping writes in flight (tests, shutdown). */
    async flush() {
      await Promise.all([...pending]);
    },
  };
}

export type ApiKeyUsageRecorder = ReturnType<typeof createApiKeyUsageRecorder>;
