import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { insertCampaign, insertContact, seedWorkspace, T0 } from '../../../test/support/campaign-rows.ts';
import { closeAtEnd } from '../../../test/support/cleanup.ts';
import { dialerRig } from '../../../test/support/dialer-rig.ts';
import { until } from '../../../test/support/processes.ts';

// The dialer's wake-ups (dialer.ts: `announce`, the nudge after a pass that skipped contacts), with
// its job started and its safety-net poll ten minutes away: what is dialed here within the wait
// was dialed because the dialer was woken, not because the poll came round. The waits are bounds
// (a minute), not timings: a loaded machine only makes them longer.

const POLL_MS = 10 * 60_000;
const rig = await dialerRig({ pollIntervalMs: POLL_MS });
const { db } = rig;

before(async () => {
  await rig.parkOthers();
  await rig.dialer.start();
  // Closers run last registered first: the dialer stops before its database (registered earlier) closes.
  closeAtEnd(() => rig.dialer.stop());
});

const callsOf = (what: string, campaignId: string, n: number) =>
  until(what, async () => {
    const calls = await rig.callsOf(campaignId);
    return calls.length >= n ? calls : undefined;
  });

describe('the started dialer is woken, not polled', () => {
  it('a campaign started in a transaction that announces it is dialed once that commits', async () => {
    const ws = await seedWorkspace(db);
    const campaign = await insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId, status: 'paused' });
    const contact = await insertContact(db, campaign);
    await db.transaction().execute(async (tx) => {
      await tx.updateTable('campaigns').set({ status: 'running' }).where('id', '=', campaign.id).execute();
      await rig.dialer.announce(tx);
    });
    const [call] = await callsOf('the announced campaign dialed', campaign.id, 1);
    assert.equal(call.to_number, contact.phone);
  });

  it('a pass that skipped a do-not-call contact passes again at once: the room it left is filled', async () => {
    const ws = await seedWorkspace(db);
    const campaign = await insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId, status: 'paused', concurrency: 1 });
    // Picked first (lower id), skipped; the next pass picks the other.
    const blocked = await insertContact(db, campaign, { phone: '+15550199101' });
    const free = await insertContact(db, campaign, { phone: '+15550199102' });
    await db.insertInto('dnc_numbers').values({ workspace_id: ws.workspaceId, number: blocked.phone, reason: null, created_at: T0 }).execute();
    await db.transaction().execute(async (tx) => {
      await tx.updateTable('campaigns').set({ status: 'running' }).where('id', '=', campaign.id).execute();
      await rig.dialer.announce(tx);
    });
    const [call] = await callsOf('the contact after the skipped one dialed', campaign.id, 1);
    assert.equal(call.to_number, free.phone);
    const skipped = await db.selectFrom('campaign_contacts').select('status').where('id', '=', blocked.id).executeTakeFirstOrThrow();
    assert.equal(skipped.status, 'skipped');
  });
});
