import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { as } from '../calls/test-helpers.ts';
import { action, createCampaign, numbersCsv, uploadCsv } from './test-helpers.ts';

// A campaign's `concurrency` counts every call of it not ended yet: queued ones too (the calls
// dialer has not picked them up yet, but will), not only ringing and in-progress ones. Driven
// pass by pass (the campaign dialer's runDueOnce, no calls dialer running), so the queued calls
// stay queued while the next pass looks at them.

const t = await buildTestApp();

const unended = async (campaignId: string) =>
  t.platform.db.selectFrom('calls').select(['id', 'status']).where('campaign_id', '=', campaignId).where('status', 'in', ['queued', 'ringing', 'in_progress']).execute();

describe('campaign concurrency', () => {
  it('queued calls count: a second pass adds none, a ringing one still counts, more room adds exactly the difference', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user, { concurrency: 2 });
    await uploadCsv(t, user, campaign.id, numbersCsv(6));
    await action(t, user, campaign.id, 'start');

    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 2, 'two calls queued (concurrency 2)');
    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 0, 'two queued calls fill the campaign');
    const queued = await unended(campaign.id);
    assert.deepEqual(queued.map((c) => c.status), ['queued', 'queued']);

    // The calls dialer picks one up: one queued and one ringing are still two.
    await t.platform.db.updateTable('calls').set({ status: 'ringing' }).where('id', '=', queued[0].id).execute();
    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 0);

    const patched = await t.request({ method: 'PATCH', url: `/v1/campaigns/${campaign.id}`, ...as(user), payload: { concurrency: 3 } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 1, 'one more slot, one more call');
    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 0);
    assert.equal((await unended(campaign.id)).length, 3);
    const stats = (await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}`, ...as(user) })).json().stats;
    assert.deepEqual([stats.pending, stats.in_progress], [3, 3]);
  });
});
