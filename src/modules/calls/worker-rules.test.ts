import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { until } from '../../../test/support/processes.ts';
import { runnerRig, SANDBOX_NUMBERS } from '../../../test/support/runner-rig.ts';
import type { CallRow } from './repo.ts';
import { createCallWorker } from './worker.ts';

// The dialer (worker.ts) on the real runner and sandbox (SANDBOX_SPEED=max), CALLS_PER_PROCESS=2
// and leases of 3 s: a claim takes at most what is left of the process's slots after its live
// calls and the claims in flight, leases what it claims, and the job's sweep renews this process's
// calls (applying a hang-up asked elsewhere) and ends calls whose owner died.

const { db, t, runner, worker, ownership, workspace, ringing, connected, talkative, callOf } = await runnerRig({ CALLS_PER_PROCESS: '2', CALL_LEASE_SECONDS: '3' });

async function queue(ws: { workspaceId: string; agentId: string }, n: number): Promise<CallRow[]> {
  const rows = [];
  for (let i = 0; i < n; i++) rows.push(await ringing(ws, SANDBOX_NUMBERS.busy, { lease_holder: null, lease_expires_at: null, started_at: null }, 'queued'));
  return rows;
}

async function statuses(rows: CallRow[]) {
  const out: Record<string, number> = {};
  for (const row of rows) {
    const { status } = await callOf(row.id);
    out[status] = (out[status] ?? 0) + 1;
  }
  return out;
}

/**
 * Waits until the rows have the statuses `expected` and none is live here any more, then asserts
 * them. A claimed call reaches the runner a moment after runDueOnce answers (through the job
 * runner), so the runner's registry alone may not list it yet. Bounded: a minute of polls.
 */
async function settle(rows: CallRow[], expected: Record<string, number>) {
  for (let i = 0; i < 6000; i++) {
    const live = new Set(runner.liveIds());
    if (rows.every((row) => !live.has(row.id)) && isDeepStrictEqual(await statuses(rows), expected)) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.deepEqual(await statuses(rows), expected);
}

/**
 * runDueOnce until it claims: on PostgreSQL a claim skips a workspace whose row another
 * transaction holds (a live call of it writing its wallet, say), and the next pass takes it.
 * Bounded: two hundred passes.
 */
async function claimOnceFree(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const claimed = await worker.runDueOnce();
    if (claimed > 0) return claimed;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return 0;
}

/** Holds every dial of the sandbox until the returned function is called (the claims are read meanwhile). */
function holdDials(): () => void {
  const telephony = t.platform.providers.telephony;
  const dial = telephony.dial;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  telephony.dial = async (input) => {
    await gate;
    return dial.call(telephony, input);
  };
  return () => {
    telephony.dial = dial;
    open();
  };
}

describe('claims within CALLS_PER_PROCESS', () => {
  it('takes 2 of 3 queued calls, leased by this runner for CALL_LEASE_SECONDS; the third once slots free', async () => {
    const ws = await workspace();
    const rows = await queue(ws, 3);
    const before = Date.now();
    const release = holdDials();
    assert.equal(await worker.runDueOnce(), 2);
    const claimed = [];
    for (const row of rows) {
      const call = await callOf(row.id);
      if (call.lease_holder !== null) claimed.push(call);
    }
    assert.equal(claimed.length, 2);
    for (const call of claimed) {
      assert.equal(call.lease_holder, runner.holder);
      const lease = new Date(call.lease_expires_at as Date).getTime();
      assert.ok(lease >= before + 3000 && lease <= Date.now() + 3000, 'leased CALL_LEASE_SECONDS from the claim');
    }
    release();
    await settle(rows, { busy: 2, queued: 1 });
    assert.equal(await worker.runDueOnce(), 1);
    await settle(rows, { busy: 3 });
    assert.equal(await worker.runDueOnce(), 0);
  });

  it('two claims at once take no more than the slots together', async () => {
    const ws = await workspace();
    const rows = await queue(ws, 4);
    const [a, b] = await Promise.all([worker.runDueOnce(), worker.runDueOnce()]);
    assert.equal(a + b, 2);
    await settle(rows, { busy: 2, queued: 2 });
    assert.equal(await worker.runDueOnce(), 2);
    await settle(rows, { busy: 4 });
  });

  it('a live call of the runner takes a slot: one claimed beside it, none beside two', async () => {
    const ws = await workspace();
    const live = await ringing(ws, undefined, { simulation: talkative() });
    const running = runner.runOutbound(live);
    const rows = await queue(ws, 2);
    assert.equal(await claimOnceFree(), 1, 'one slot beside the live call');
    const second = await ringing(ws, undefined, { simulation: talkative() });
    await connected(live.id);
    const runningSecond = runner.runOutbound(second);
    for (const id of runner.liveIds()) if (id !== live.id && id !== second.id) await runner.ended(id);
    assert.equal(await worker.runDueOnce(), 0, 'both slots are live calls');
    // A third live call (as an inbound call or a voice session, never refused): no room below zero.
    const third = await ringing(ws, undefined, { simulation: talkative() });
    const runningThird = runner.runOutbound(third);
    assert.equal(runner.size, 3);
    assert.equal(await worker.runDueOnce(), 0, 'more live calls than slots');
    runner.hangup(live.id);
    runner.hangup(second.id);
    runner.hangup(third.id);
    await Promise.all([running, runningSecond, runningThird]);
    assert.equal(await claimOnceFree(), 1);
    await settle(rows, { busy: 2 });
  });

  it('a claim that fails gives its slots back: the next takes both', async () => {
    const { platform } = t;
    const database = platform.db;
    platform.db = new Proxy(database, {
      get() {
        throw new Error('the database is down');
      },
    });
    try {
      await assert.rejects(worker.runDueOnce(), /the database is down/);
    } finally {
      platform.db = database;
    }
    const ws = await workspace();
    const rows = await queue(ws, 2);
    const release = holdDials();
    assert.equal(await worker.runDueOnce(), 2);
    release();
    await settle(rows, { busy: 2 });
  });
});

describe('the job\'s sweep', () => {
  it('ends a call whose owner died, and applies a hang-up asked for a call of this process', async () => {
    const ws = await workspace();
    const past = new Date(Date.now() - 60_000);
    const lost = await ringing(ws, undefined, { lease_holder: 'dead-process', lease_expires_at: past, answered_at: past, live_elapsed_ms: 4000 }, 'in_progress');
    const live = await ringing(ws, undefined, { simulation: talkative(10) });
    const running = runner.runOutbound(live);
    await connected(live.id);
    await db.updateTable('calls').set({ control: JSON.stringify({ action: 'hangup' }) }).where('id', '=', live.id).execute();
    await worker.start();
    try {
      await running;
      await until('the lost call to fail', async () => ((await callOf(lost.id)).status === 'failed' ? true : undefined), 20_000);
    } finally {
      await worker.stop();
    }
    assert.equal((await callOf(live.id)).end_reason, 'api_hangup');
    const after = await callOf(lost.id);
    assert.deepEqual([after.status, after.duration_ms], ['failed', 4000]);
    assert.ok(t.platform.config.calls.leaseMs === 3000);
  });

  it('renews the lease of a call it runs before it lapses: a dial held past the 3 s lease keeps it', async () => {
    const renewals: number[] = [];
    const renew = ownership.renew;
    ownership.renew = () => {
      renewals.push(Date.now());
      return renew();
    };
    const ws = await workspace();
    const [row] = await queue(ws, 1);
    const release = holdDials();
    await worker.start();
    try {
      await until('the loop to claim the call', async () => (runner.liveIds().includes(row.id) ? true : undefined), 20_000);
      await new Promise((resolve) => setTimeout(resolve, 3500));
      const call = await callOf(row.id);
      assert.equal(call.lease_holder, runner.holder);
      assert.ok(new Date(call.lease_expires_at as Date).getTime() > Date.now(), 'the lease runs on');
      assert.ok(renewals.length >= 2, `${renewals.length} renewals`);
    } finally {
      release();
      await worker.stop();
      ownership.renew = renew;
    }
    await settle([row], { busy: 1 });
  });
});

describe('nudges', () => {
  it('wake the loop when a call is queued: claimed at once though the poll is ten minutes', async () => {
    const dialer = createCallWorker({ platform: t.platform, runner, ownership, pollIntervalMs: 600_000 });
    const ws = await workspace();
    await dialer.start();
    try {
      // The loop's first pass (at start, nothing queued) is over before the call is queued.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const rows = await queue(ws, 1);
      dialer.nudge();
      await settle(rows, { busy: 1 });
    } finally {
      await dialer.stop();
    }
  });
});
