import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { SANDBOX_NUMBERS } from '../../providers/telephony/sandbox.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';
import { startReceiver } from '../webhooks/test-receiver.ts';
import { action, createCampaign, numbersCsv, uploadCsv } from './test-helpers.ts';

// The campaign dialer with the real call runtime (sandbox calls at SANDBOX_SPEED 100, ended by the agent's max_duration so each is short): the
// campaign's live calls, sampled in the database while it runs, never exceed its concurrency;
// pause stops dialing and resume finishes it; busy numbers are retried; a number put on the DNC
// list after the upload is skipped; the last contact completes the campaign and sends
// campaign.completed to the tenant webhook; the results CSV matches the calls.

const t = await buildTestApp({ env: { SANDBOX_SPEED: '100' } });
const receiver = await startReceiver();
after(() => receiver.close());

const liveCount = async (campaignId: string) => {
  const row = await t.platform.db
    .selectFrom('calls')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('campaign_id', '=', campaignId)
    .where('status', 'in', ['ringing', 'in_progress'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
};
const placedCount = async (campaignId: string) => {
  const row = await t.platform.db.selectFrom('calls').select((eb) => eb.fn.countAll<string>().as('n')).where('campaign_id', '=', campaignId).where('status', '<>', 'canceled').executeTakeFirstOrThrow();
  return Number(row.n);
};
const campaignOf = async (user: TestUser, id: string) => (await t.request({ method: 'GET', url: `/v1/campaigns/${id}`, ...as(user) })).json();

describe('campaign dialer', () => {
  it('200 contacts at concurrency 5: never more than 5 live, pauses and resumes, retries busy, skips DNC, completes, exports results', async () => {
    const user = await signUp(t);
    await t.platform.db.updateTable('wallets').set({ balance_micros: 1_000_000_000 }).where('workspace_id', '=', user.workspaceId).execute();
    const hook = await t.request({ method: 'PUT', url: '/v1/webhooks', ...as(user), payload: { webhook_url: receiver.url } });
    assert.equal(hook.statusCode, 200, hook.body);
    const agent = await createCallAgent(t, user, { max_duration_seconds: 10, first_message: 'Hi.', extraction_fields: [{ name: 'topic', type: 'string', description: 'what the caller asked about' }] });
    const campaign = await createCampaign(t, user, { agent_id: agent.id, concurrency: 5, max_attempts: 2, retry_delay_minutes: 0, simulation: { caller_script: ['Hi, just checking my booking. Goodbye!'] } });
    const blockedLater = '+15550100499';
    const upload = await uploadCsv(t, user, campaign.id, numbersCsv(200, [SANDBOX_NUMBERS.busy, blockedLater]));
    assert.equal(upload.accepted, 202);
    await t.request({ method: 'POST', url: '/v1/dnc', ...as(user), payload: { number: blockedLater } });

    await t.modules.calls.worker.start();
    await t.modules.campaigns.dialer.start();
    try {
      assert.equal((await action(t, user, campaign.id, 'start')).status, 'running');
      let maxLive = 0;
      const sample = async () => {
        const live = await liveCount(campaign.id);
        maxLive = Math.max(maxLive, live);
        return live;
      };
      // Run until about a quarter is done, then pause.
      while ((await campaignOf(user, campaign.id)).stats.completed < 50) {
        await sample();
        await sleep(10);
      }
      assert.equal((await action(t, user, campaign.id, 'pause')).status, 'paused');
      while ((await sample()) > 0) await sleep(10);
      const placedAtPause = await placedCount(campaign.id);
      await sleep(500);
      assert.equal(await placedCount(campaign.id), placedAtPause, 'nothing is dialed while paused');
      const paused = await campaignOf(user, campaign.id);
      assert.equal(paused.status, 'paused');
      assert.ok(paused.stats.pending > 0);
      assert.equal(paused.stats.in_progress, 0);

      assert.equal((await action(t, user, campaign.id, 'start')).status, 'running');
      for (;;) {
        await sample();
        if ((await campaignOf(user, campaign.id)).status === 'completed') break;
        await sleep(10);
      }
      assert.ok(maxLive <= 5, `at most 5 live calls sampled (saw ${maxLive})`);
      assert.ok(maxLive >= 2, `calls ran side by side (saw at most ${maxLive})`);
    } finally {
      await t.modules.campaigns.dialer.stop();
      await t.modules.calls.worker.stop();
    }

    // The same from the record: calls live at once (ringing → ended) never overlap more than 5.
    const spans = await t.platform.db.selectFrom('calls').select(['started_at', 'ended_at']).where('campaign_id', '=', campaign.id).where('started_at', 'is not', null).execute();
    const edges = spans.flatMap((c) => [[new Date(c.started_at as Date).getTime(), 1], [new Date(c.ended_at as Date).getTime(), -1]]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let overlap = 0;
    let maxOverlap = 0;
    for (const [, step] of edges) {
      overlap += step;
      maxOverlap = Math.max(maxOverlap, overlap);
    }
    assert.ok(maxOverlap <= 5 && maxOverlap >= 2, `calls live at once: ${maxOverlap}`);

    const done = await campaignOf(user, campaign.id);
    assert.deepEqual(done.stats, { total: 202, pending: 0, in_progress: 0, completed: 200, failed: 1, skipped: 1, canceled: 0 });
    assert.ok(done.completed_at);

    // The busy number: two attempts, each with its call.
    const busy = (await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/contacts?status=failed`, ...as(user) })).json().data;
    assert.equal(busy.length, 1);
    assert.equal(busy[0].phone, SANDBOX_NUMBERS.busy);
    assert.equal(busy[0].attempts, 2);
    const detail = (await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/contacts/${busy[0].id}`, ...as(user) })).json();
    const dialed = detail.attempt_history.filter((a: { status: string }) => a.status !== 'canceled');
    assert.deepEqual(dialed.map((a: { attempt: number; status: string }) => [a.attempt, a.status]), [[1, 'busy'], [2, 'busy']]);
    assert.equal(dialed[1].call_id, busy[0].call_id);
    const skipped = (await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/contacts?status=skipped`, ...as(user) })).json().data;
    assert.deepEqual(skipped.map((c: { phone: string; attempts: number }) => [c.phone, c.attempts]), [[blockedLater, 0]]);

    // One call per attempt: every contact was dialed exactly as often as its attempts say.
    const perContact = await t.platform.db
      .selectFrom('campaign_attempts')
      .select(['contact_id', (eb) => eb.fn.countAll<string>().as('n')])
      .where('campaign_id', '=', campaign.id)
      .where('status', '<>', 'canceled')
      .groupBy('contact_id')
      .execute();
    assert.equal(perContact.length, 201);
    assert.equal(perContact.reduce((sum, r) => sum + Number(r.n), 0), 202);

    // Calls carry the campaign, the row's variables and the campaign's simulation.
    const call = await t.request({ method: 'GET', url: `/v1/calls?campaign_id=${campaign.id}&limit=1`, ...as(user) });
    const first = call.json().data[0];
    assert.equal(first.campaign_id, campaign.id);
    assert.match(first.variables.name, /^Contact \d+$|^Special$/);
    const row = await t.platform.db.selectFrom('calls').select('simulation').where('id', '=', first.id).executeTakeFirstOrThrow();
    assert.deepEqual(row.simulation, { caller_script: ['Hi, just checking my booking. Goodbye!'] });

    // campaign.completed, once, delivered to the tenant webhook.
    const events = await t.platform.db.selectFrom('webhook_events').select('payload').where('workspace_id', '=', user.workspaceId).where('type', '=', 'campaign.completed').execute();
    assert.equal(events.length, 1);
    const worker = t.modules.webhooks.worker;
    await worker.runDueOnce();
    const delivered = receiver.received.filter((r) => r.body.includes('campaign.completed') && r.body.includes(campaign.id));
    assert.equal(delivered.length, 1);
    const body = JSON.parse(delivered[0].body);
    assert.equal(body.event, 'campaign.completed');
    assert.deepEqual({ ...body.data, started_at: undefined, completed_at: undefined }, { campaign_id: campaign.id, name: 'November reminders', total: 202, completed: 200, failed: 1, started_at: undefined, completed_at: undefined });

    // Results: one row per contact, from its latest call.
    const results = await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/results`, ...as(user) });
    assert.equal(results.statusCode, 200);
    assert.match(String(results.headers['content-type']), /^text\/csv/);
    const rows = parse(results.body, { columns: true }) as Array<Record<string, string>>;
    assert.equal(rows.length, 202);
    assert.deepEqual(Object.keys(rows[0]), ['phone', 'status', 'attempts', 'call_id', 'duration_seconds', 'end_reason', 'ended_at', 'name', 'extracted.topic']);
    const busyRow = rows.find((r) => r.phone === SANDBOX_NUMBERS.busy);
    assert.deepEqual([busyRow?.status, busyRow?.attempts, busyRow?.end_reason, busyRow?.call_id], ['failed', '2', 'busy', busy[0].call_id]);
    const reached = rows.find((r) => r.phone === '+15552000007');
    assert.equal(reached?.status, 'completed');
    assert.equal(reached?.name, 'Contact 7');
    const reachedCall = (await t.request({ method: 'GET', url: `/v1/calls/${reached?.call_id}`, ...as(user) })).json();
    assert.equal(reached?.duration_seconds, String(reachedCall.duration_seconds));
    assert.equal(reached?.end_reason, reachedCall.end_reason);
    assert.equal(reached?.ended_at, reachedCall.ended_at);
    assert.equal(rows.find((r) => r.phone === blockedLater)?.status, 'skipped');

    const stats = (await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/stats`, ...as(user) })).json();
    assert.equal(stats.calls, 202);
    assert.equal(stats.live_calls, 0);
    assert.equal(stats.outcomes.busy, 2);
    assert.equal(stats.completed, 200);
    assert.ok(stats.duration_seconds > 0 && stats.cost_usd > 0);
  });

  it('an empty wallet pauses a running campaign with a reason', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user);
    await uploadCsv(t, user, campaign.id, numbersCsv(3));
    await action(t, user, campaign.id, 'start');
    await t.platform.db.updateTable('wallets').set({ balance_micros: 0 }).where('workspace_id', '=', user.workspaceId).execute();
    await t.modules.campaigns.dialer.runDueOnce();
    const paused = await campaignOf(user, campaign.id);
    assert.equal(paused.status, 'paused');
    assert.equal(paused.pause_reason, 'insufficient_balance');
    assert.equal(await placedCount(campaign.id), 0);
  });

  it('cancel withdraws calls not dialed yet and cancels the contacts left', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user, { concurrency: 3 });
    await uploadCsv(t, user, campaign.id, numbersCsv(5));
    await action(t, user, campaign.id, 'start');
    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 3, 'three calls queued (concurrency 3)');
    const canceled = await action(t, user, campaign.id, 'cancel');
    assert.equal(canceled.status, 'canceled');
    assert.equal(canceled.stats.canceled, 5);
    const calls = await t.platform.db.selectFrom('calls').select('status').where('campaign_id', '=', campaign.id).execute();
    assert.deepEqual(calls.map((c) => c.status), ['canceled', 'canceled', 'canceled']);
    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 0);
  });
});
