import type { FastifyBaseLogger } from 'fastify';
import type { BlobStore } from '../../ports/blobs.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { BLOCK_SAMPLES } from '../../runtime/audio/recorder.ts';
import { loadCallAgent } from '../agents/call-agent.ts';
import { findLostCalls } from './dialer-sql.ts';
import type { CallJournal } from './journal.ts';
import { deleteRawBlock, savedRawSamples } from './raw-tracks.ts';
import type { CallRunner } from './runner.ts';
import type { CallRow } from './repo.ts';
import type { CallControl } from './tables.ts';

// Ownership of live calls: this process renews the leases of the calls it runs (and applies the
// hang-ups and transfers other instances asked for on them), and ends, as any worker may, the
// calls whose owner stopped renewing (its process died): failed, media_error, runtime_lost,
// billed up to the last renewal, with call.error then call.ended. What the dead process had
// recorded is kept: the complete raw blocks it wrote become the call's recording (the post-call
// job's, as for any call), and only the block it was writing when it died is lost.

export interface OwnershipDeps {
  db: Database;
  clock: Clock;
  journal: CallJournal;
  runner: CallRunner;
  blobs: BlobStore;
  logger: FastifyBaseLogger;
  leaseMs: number;
  /** The cap on sandbox calls' virtual milliseconds per wall millisecond (SANDBOX_SPEED; Infinity at `max`). */
  sandboxSpeed: number;
}

export function createCallOwnership(deps: OwnershipDeps) {
  const { db, clock, journal, runner, logger } = deps;

  async function renew(): Promise<void> {
    const rows = await journal.renew(runner.holder, runner.liveElapsed(), deps.leaseMs);
    for (const row of rows) {
      const control = row.control as CallControl | null;
      if (!control) continue;
      if (control.action === 'hangup') runner.hangup(row.id);
      else runner.transfer(row.id, control.to);
      await db.updateTable('calls').set({ control: null }).where('id', '=', row.id).execute();
    }
  }

  /** Ends every call whose lease expired; answers how many. */
  async function endLost(): Promise<number> {
    const now = clock.now();
    const lost = await findLostCalls(db, clock);
    let ended = 0;
    for (const row of lost) {
      const agent = await loadCallAgent(db, row.workspace_id, row.agent_id);
      const durationMs = lostCallDurationMs(row, agent?.max_duration_seconds ?? null, deps.sandboxSpeed);
      const recordingSamples = await savedRawSamples(deps.blobs, row.workspace_id, row.id);
      const done = await journal.finish(row, agent?.destination ?? null, {
        status: 'failed',
        endReason: 'media_error',
        durationMs,
        error: { code: 'runtime_lost', message: 'the process running the call stopped; the call was ended by another worker' },
        emitError: true,
        leaseExpiredBefore: now,
        recordingSamples,
      });
      if (!done) continue;
      ended++;
      // The block being written when the process died, one of its tracks perhaps stored: never used.
      await deleteRawBlock(deps.blobs, row.workspace_id, row.id, recordingSamples / BLOCK_SAMPLES);
    }
    if (ended > 0) logger.warn({ ended }, 'ended calls whose runtime was lost');
    return ended;
  }

  return { renew, endLost };
}

/**
 * What a call whose process died is billed: its length on its own clock at the last renewal
 * (`live_elapsed_ms`). A call lost before any renewal wrote it: the wall time from the answer to
 * the last renewal, which for a sandbox call is SANDBOX_SPEED times that, never past the agent's
 * limit (a deleted agent's call has none).
 */
export function lostCallDurationMs(row: CallRow, maxDurationSeconds: number | null, sandboxSpeed: number): number {
  const limitMs = maxDurationSeconds === null ? Number.POSITIVE_INFINITY : maxDurationSeconds * 1000;
  if (row.live_elapsed_ms !== null && row.answered_at) return Math.min(row.live_elapsed_ms, limitMs);
  const answered = row.answered_at ? new Date(row.answered_at).getTime() : null;
  const renewed = row.last_renewed_at ? new Date(row.last_renewed_at).getTime() : null;
  const wallMs = answered !== null && renewed !== null ? Math.max(0, renewed - answered) : 0;
  if (row.provider !== 'sandbox') return wallMs;
  // At `max` speed with no agent left to limit it the call's own length is unknowable: the wall time
  // (0 × ∞ is NaN: a call lost at its answer is 0 either way).
  const scaled = Math.min(wallMs * sandboxSpeed, limitMs);
  return Math.round(Number.isFinite(scaled) ? scaled : wallMs);
}
