import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { Insertable } from 'kysely';
import { contactOf, insertCampaign, insertContact, seedWorkspace, T0 } from '../../../test/support/campaign-rows.ts';
import { dialerRig } from '../../../test/support/dialer-rig.ts';
import { SANDBOX_CALLER_ID } from '../../ports/telephony.ts';
import type { CampaignsTable } from './tables.ts';

// The dialer's pass (dialer.ts: `dialOnce`, `dialCampaign`, `openZones`), fast: rows written
// directly, `runDueOnce()` against the real database and call journal (test/support/dialer-rig.ts),
// no HTTP, no call runtime: the wallet pause, do-not-call, the queued call's fields, the attempt,
// the calling window's zones, the count answered and the nudge, 50 campaigns a pass.
// dialer-finish-rules.test.ts pins the finish hook and the completion.

const rig = await dialerRig();
const { db, clock } = rig;
const at = (ms: number) => new Date(T0.getTime() + ms);

beforeEach(() => rig.reset());

async function campaignWith(fields: Partial<Insertable<CampaignsTable>> = {}, balanceMicros?: number) {
  const ws = await seedWorkspace(db, balanceMicros);
  return insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId, ...fields });
}

const statusOf = async (id: string) => (await contactOf(db, id)).status;

describe('dialCampaign: the wallet', () => {
  const cases: Array<[string, (workspaceId: string) => Promise<unknown>]> = [
    ['empty', (ws) => db.updateTable('wallets').set({ balance_micros: 0 }).where('workspace_id', '=', ws).execute()],
    ['negative', (ws) => db.updateTable('wallets').set({ balance_micros: -1 }).where('workspace_id', '=', ws).execute()],
    ['missing', (ws) => db.deleteFrom('wallets').where('workspace_id', '=', ws).execute()],
  ];
  for (const [name, setWallet] of cases) {
    it(`${name} wallet: paused (insufficient_balance, at now), nothing queued, no nudge`, async () => {
      const campaign = await campaignWith();
      const contact = await insertContact(db, campaign);
      await setWallet(campaign.workspace_id);
      clock.set(at(5000));
      const nudges = rig.nudges();
      assert.equal(await rig.dialer.runDueOnce(), 0);
      const row = await rig.campaignOf(campaign.id);
      assert.deepEqual([row.status, row.pause_reason, new Date(row.updated_at).getTime()], ['paused', 'insufficient_balance', at(5000).getTime()]);
      assert.equal(await statusOf(contact.id), 'pending');
      assert.deepEqual(await rig.callsOf(campaign.id), []);
      assert.equal(rig.nudges(), nudges);
    });
  }

  it('one micro-USD dials; an empty wallet pauses only its own campaign', async () => {
    const rich = await campaignWith({}, 1);
    const contact = await insertContact(db, rich);
    const poor = await campaignWith({}, 0);
    await insertContact(db, poor);
    assert.equal(await rig.dialer.runDueOnce(), 1);
    assert.equal(await statusOf(contact.id), 'calling');
    assert.deepEqual([(await rig.campaignOf(rich.id)).status, (await rig.campaignOf(rich.id)).pause_reason], ['running', null]);
    assert.equal((await rig.campaignOf(poor.id)).status, 'paused');
  });
});

describe('dialCampaign: do-not-call', () => {
  it('a number on the workspace’s list is skipped (at now), not dialed; the same number on another workspace’s list is dialed', async () => {
    const campaign = await campaignWith({ concurrency: 5 });
    const blocked = await insertContact(db, campaign, { phone: '+15550199001' });
    const free = await insertContact(db, campaign, { phone: '+15550199002' });
    const elsewhere = await insertContact(db, campaign, { phone: '+15550199003' });
    const other = await seedWorkspace(db);
    await db
      .insertInto('dnc_numbers')
      .values([
        { workspace_id: campaign.workspace_id, number: blocked.phone, reason: null, created_at: T0 },
        { workspace_id: other.workspaceId, number: elsewhere.phone, reason: null, created_at: T0 },
      ])
      .execute();
    clock.set(at(7000));
    assert.equal(await rig.dialer.runDueOnce(), 2);
    const after = await contactOf(db, blocked.id);
    assert.deepEqual([after.status, after.attempts, after.call_id, new Date(after.updated_at).getTime()], ['skipped', 0, null, at(7000).getTime()]);
    assert.deepEqual([await statusOf(free.id), await statusOf(elsewhere.id)], ['calling', 'calling']);
    assert.deepEqual((await rig.callsOf(campaign.id)).map((c) => c.to_number).sort(), [elsewhere.phone, free.phone].sort());
    assert.deepEqual(await db.selectFrom('campaign_attempts').select('call_id').where('contact_id', '=', blocked.id).execute(), []);
  });
});

describe('dialCampaign: the call and the attempt', () => {
  it('queues the call with every field of the campaign and the contact, and begins the attempt', async () => {
    const simulation = { caller_script: ['Hello?'] };
    const campaign = await campaignWith({ from_number: '+15550100777', simulation: JSON.stringify(simulation) });
    const contact = await insertContact(db, campaign, { attempts: 1 });
    clock.set(at(9000));
    assert.equal(await rig.dialer.runDueOnce(), 1);
    const [call] = await rig.callsOf(campaign.id);
    const { id, workspace_id, agent_id, direction, from_number, to_number, provider, status, variables, metadata, campaign_id } = call;
    assert.match(id, /^call_[0-9a-z]{26}$/);
    assert.deepEqual(
      { workspace_id, agent_id, direction, from_number, to_number, provider, status, variables, metadata, campaign_id, simulation: call.simulation },
      {
        workspace_id: campaign.workspace_id,
        agent_id: campaign.agent_id,
        direction: 'outbound',
        from_number: '+15550100777',
        to_number: contact.phone,
        provider: 'sandbox-rig',
        status: 'queued',
        variables: contact.variables,
        metadata: { campaign_contact_id: contact.id },
        campaign_id: campaign.id,
        simulation,
      },
    );
    const after = await contactOf(db, contact.id);
    assert.deepEqual([after.status, after.attempts, after.call_id, new Date(after.updated_at).getTime()], ['calling', 2, id, at(9000).getTime()]);
    const attempt = await rig.attemptOf(id);
    assert.deepEqual([attempt.contact_id, attempt.campaign_id, attempt.attempt, attempt.status], [contact.id, campaign.id, 2, 'queued']);
  });

  it('a campaign without a from number calls from the sandbox caller id, without a simulation', async () => {
    const campaign = await campaignWith({ from_number: null, simulation: null });
    await insertContact(db, campaign);
    await rig.dialer.runDueOnce();
    const [call] = await rig.callsOf(campaign.id);
    assert.deepEqual([call.from_number, call.simulation], [SANDBOX_CALLER_ID, null]);
  });
});

describe('openZones: the calling window', () => {
  // T0 is Monday 2026-11-23 10:00 UTC: 11:00 in Paris, 19:00 in Tokyo, 05:00 in New York.
  const window = (timezone: string) => JSON.stringify({ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00', timezone });

  async function zonesDialed(callingWindow: string | null) {
    const campaign = await campaignWith({ concurrency: 10, calling_window: callingWindow });
    const contacts = {
      paris: await insertContact(db, campaign, { timezone: 'Europe/Paris' }),
      tokyo: await insertContact(db, campaign, { timezone: 'Asia/Tokyo' }),
      york: await insertContact(db, campaign, { timezone: 'America/New_York' }),
      none: await insertContact(db, campaign, { timezone: null }),
    };
    await rig.dialer.runDueOnce();
    const dialed: string[] = [];
    for (const [name, c] of Object.entries(contacts)) if ((await statusOf(c.id)) === 'calling') dialed.push(name);
    return dialed;
  }

  it('no window: every zone', async () => {
    assert.deepEqual(await zonesDialed(null), ['paris', 'tokyo', 'york', 'none']);
  });

  it('a window: the zones where it is open now; contacts without a zone by the window’s own zone', async () => {
    assert.deepEqual(await zonesDialed(window('Europe/Paris')), ['paris', 'none']);
    assert.deepEqual(await zonesDialed(window('America/New_York')), ['paris']);
    assert.deepEqual(await zonesDialed(window('Asia/Tokyo')), ['paris']);
  });

  it('a window open in no zone: nothing queued, the campaign still running', async () => {
    const nightOnly = JSON.stringify({ days: ['sat'], start: '09:00', end: '17:00', timezone: 'UTC' });
    assert.deepEqual(await zonesDialed(nightOnly), []);
  });
});

describe('dialOnce', () => {
  it('answers how many calls all campaigns queued; nudges the calls dialer once when some were, not when none', async () => {
    const a = await campaignWith({ concurrency: 2 });
    const b = await campaignWith({ concurrency: 5 });
    for (let i = 0; i < 3; i++) await insertContact(db, a);
    await insertContact(db, b);
    const nudges = rig.nudges();
    assert.equal(await rig.dialer.runDueOnce(), 3);
    assert.equal(rig.nudges(), nudges + 1);
    assert.equal(await rig.dialer.runDueOnce(), 0, 'a is full, b has nobody left');
    assert.equal(rig.nudges(), nudges + 1);
  });

  it('dials 50 campaigns a pass; the next pass starts after the last one reached, so the 51st is not starved', async () => {
    const ws = await seedWorkspace(db);
    const campaigns = [];
    for (let i = 0; i < 51; i++) campaigns.push(await insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId }));
    // Two contacts each, so the first 50 still have one due after the first pass (concurrency 1).
    for (const c of campaigns) {
      await db.updateTable('campaigns').set({ concurrency: 1 }).where('id', '=', c.id).execute();
      await insertContact(db, c);
      await insertContact(db, c);
    }
    assert.equal(await rig.dialer.runDueOnce(), 50);
    assert.deepEqual(await rig.callsOf(campaigns[50].id), [], 'the 51st waits for the next pass');
    // The first 50 are full (one call each, concurrency 1): only the 51st has room.
    assert.equal(await rig.dialer.runDueOnce(), 1);
    assert.equal((await rig.callsOf(campaigns[50].id)).length, 1, 'the 51st reached');
  });

  it('the next pass starts right after the last campaign the pass reached, and comes round to the first', async () => {
    const ws = await seedWorkspace(db);
    const campaigns = [];
    for (let i = 0; i < 52; i++) campaigns.push(await insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId, concurrency: 2 }));
    for (const c of campaigns) await insertContact(db, c);
    // Due only at the second pass: the first campaign's (reached again after the 52nd) and the 49th's (not reached again).
    const first = await insertContact(db, campaigns[0], { next_attempt_at: at(60_000) });
    const late = await insertContact(db, campaigns[48], { next_attempt_at: at(60_000) });
    assert.equal(await rig.dialer.runDueOnce(), 50, 'campaigns 1 to 50');
    clock.set(at(60_000));
    // Campaigns 51 and 52, then 1 to 48: the first one's late contact is dialed, not the 49th's.
    assert.equal(await rig.dialer.runDueOnce(), 3);
    assert.deepEqual(
      [(await rig.callsOf(campaigns[50].id)).length, (await rig.callsOf(campaigns[51].id)).length, (await contactOf(db, first.id)).status, (await contactOf(db, late.id)).status],
      [1, 1, 'calling', 'pending'],
    );
  });
});
