import type { Insertable } from 'kysely';
import type { CallRow } from '../../src/modules/calls/repo.ts';
import type { CallsTable, CallStatus } from '../../src/modules/calls/tables.ts';
import { SANDBOX_NUMBERS } from '../../src/providers/telephony/sandbox.ts';
import { buildTestApp, type TestApp } from './app.ts';
import { callOf, insertCallRow, seedWorkspace } from './call-rows.ts';

// The calls module's runner, worker and ownership as the app builds them (the real sandbox
// telephony, STT, TTS and engine, the real journal on this file's test database), driven directly:
// rows written straight into the tables, a call run by runner.runOutbound / runner.answer and
// awaited, no HTTP request and no job loop. For src/modules/calls/runner*-rules.test.ts,
// worker-rules.test.ts and ownership-rules.test.ts.

export { SANDBOX_NUMBERS };

export async function runnerRig(env: Record<string, string> = {}) {
  const t: TestApp = await buildTestApp({ env: { SANDBOX_SPEED: 'max', ...env } });
  const db = t.platform.db;
  const { runner, worker, ownership } = t.modules.calls;

  /** A workspace with an agent (its webhook set: every call event is written) and a wallet of `balanceMicros`. */
  async function workspace(balanceMicros?: number) {
    const ws = await seedWorkspace(db, balanceMicros);
    await db.updateTable('agents').set({ webhook_url: 'https://hooks.example.test/agent' }).where('id', '=', ws.agentId).execute();
    return ws;
  }

  /** Resolves once the call is connected here (its session started), polling the registry. */
  async function connected(callId: string): Promise<void> {
    for (let i = 0; i < 2000; i++) {
      if (runner.liveElapsed().some((c) => c.id === callId && c.elapsedMs > 0)) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`call ${callId} never connected`);
  }

  /**
   * A caller who talks on: `lines` short lines, none a goodbye (the call lasts past a few turns).
   * Few: the caller synthesises every line at the start, and the app's close waits for those syntheses.
   */
  const talkative = (lines = 5) => JSON.stringify({ caller_script: Array.from({ length: lines }, (_, i) => `And item ${i + 1}?`) });

  /** A ringing call leased by this runner (as the dialer claims one), to `to`, with any other fields. */
  function ringing(ws: { workspaceId: string; agentId: string }, to: string = '+15550123456', fields: Partial<Insertable<CallsTable>> = {}, status: CallStatus = 'ringing'): Promise<CallRow> {
    return insertCallRow(db, ws, status, { to_number: to, lease_holder: runner.holder, lease_expires_at: new Date(Date.now() + 60_000), started_at: new Date(), ...fields });
  }

  return { t, db, runner, worker, ownership, workspace, ringing, connected, talkative, callOf: (id: string) => callOf(db, id) };
}
