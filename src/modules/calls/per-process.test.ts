import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { as, createCallAgent, placeCall } from './test-helpers.ts';

// CALLS_PER_PROCESS: the dialer of one process runs at most that many calls at once, whatever the
// workspace limit allows; the others wait in queued and start as slots free.

const TERMINAL = new Set(['completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled']);

describe('CALLS_PER_PROCESS', () => {
  it('runs at most 2 calls at once with CALLS_PER_PROCESS=2, and all 5 queued calls complete', async (ctx) => {
    const t = await buildTestApp({ t: ctx, env: { SANDBOX_SPEED: '50', CALLS_PER_PROCESS: '2' } });
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    await t.platform.db.updateTable('workspaces').set({ max_concurrent_calls: 50 }).where('id', '=', user.workspaceId).execute();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['Goodbye!'] } })).id);

    // The process's live calls, read every few milliseconds while the calls run (a call lasts seconds).
    let most = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        most = Math.max(most, t.modules.calls.runner.size);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();

    // Two claims at once (as the loop and runDueOnce may) share the process's room.
    const claimed = await Promise.all([t.modules.calls.worker.runDueOnce(), t.modules.calls.worker.runDueOnce()]);
    assert.equal(claimed[0] + claimed[1], 2);
    assert.equal(t.modules.calls.runner.size, 2);
    const queued = await t.platform.db.selectFrom('calls').select('id').where('id', 'in', ids).where('status', '=', 'queued').execute();
    assert.equal(queued.length, 3, 'the workspace limit allows 50, the process takes 2');

    const statuses = new Map<string, string>();
    while ([...ids].some((id) => !TERMINAL.has(statuses.get(id) ?? ''))) {
      await t.modules.calls.worker.runDueOnce();
      const rows = await t.platform.db.selectFrom('calls').select(['id', 'status']).where('id', 'in', ids).execute();
      for (const row of rows) statuses.set(row.id, row.status);
      const live = rows.filter((row) => row.status === 'ringing' || row.status === 'in_progress').length;
      assert.ok(live <= 2, `${live} calls live at once`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    watching = false;
    await watcher;
    assert.equal(most, 2);
    for (const id of ids) {
      const call = (await t.request({ method: 'GET', url: `/v1/calls/${id}`, ...as(user) })).json();
      assert.equal(call.status, 'completed', `${id}: ${call.status} ${call.end_reason}`);
    }
  });

  it('is read from CALLS_PER_PROCESS, or its former name CALL_WORKER_CAPACITY, default 100', async () => {
    const { loadConfig } = await import('../../config.ts');
    assert.equal(loadConfig({}).calls.perProcess, 100);
    assert.equal(loadConfig({ CALLS_PER_PROCESS: '7' }).calls.perProcess, 7);
    assert.equal(loadConfig({ CALL_WORKER_CAPACITY: '9' }).calls.perProcess, 9);
    assert.equal(loadConfig({ CALLS_PER_PROCESS: '7', CALL_WORKER_CAPACITY: '9' }).calls.perProcess, 7);
    assert.throws(() => loadConfig({ CALLS_PER_PROCESS: '0' }), /CALLS_PER_PROCESS/);
  });
});
