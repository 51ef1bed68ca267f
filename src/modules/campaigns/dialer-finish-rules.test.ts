import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { Insertable } from 'kysely';
import { contactOf, eventDataOf, insertCampaign, insertContact, insertTenantEndpoint, seedWorkspace, T0 } from '../../../test/support/campaign-rows.ts';
import { dialerRig } from '../../../test/support/dialer-rig.ts';
import { newId } from '../../platform/ids.ts';
import type { CallStatus } from '../calls/tables.ts';
import type { CampaignsTable, ContactStatus } from './tables.ts';

// The dialer's finish hook (dialer.ts, `journal.onFinish`) and the campaign's completion, fast:
// rows written directly, calls queued by `runDueOnce()` and ended through the real journal's
// finish path (test/support/dialer-rig.ts), no HTTP, no call runtime. dialer.test.ts runs the same
// rules through live sandbox calls; dialer-pass-rules.test.ts pins the pass itself.

const rig = await dialerRig();
const { db, clock } = rig;
const at = (ms: number) => new Date(T0.getTime() + ms);

// A refill's nudge of an earlier test may still wait for its turn of the event loop: reset() lets it run.
beforeEach(() => rig.reset());

/** A running campaign of a workspace of its own, its contacts (pending unless said), dialed once. */
async function dialed(fields: Partial<Insertable<CampaignsTable>> = {}, contacts: Array<{ status?: ContactStatus; attempts?: number }> = [{}]) {
  const ws = await seedWorkspace(db);
  const campaign = await insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId, ...fields });
  const rows = [];
  for (const c of contacts) rows.push(await insertContact(db, campaign, c));
  const queued = await rig.dialer.runDueOnce();
  const calls = await rig.callsOf(campaign.id);
  assert.equal(calls.length, queued);
  return { campaign, contacts: rows, calls: calls.map((c) => c.id), ws };
}

/** One contact dialed, its call ended with `status` at `endedAt`: the contact afterwards. */
async function endedWith(status: CallStatus, fields: Partial<Insertable<CampaignsTable>> = {}, attempts = 0, beforeFinish?: (campaignId: string) => Promise<unknown>) {
  const { campaign, contacts, calls } = await dialed(fields, [{ attempts }]);
  await beforeFinish?.(campaign.id);
  clock.set(at(12_345));
  assert.equal(await rig.finish(calls[0], status), true);
  return { campaign, contact: await contactOf(db, contacts[0].id), callId: calls[0] };
}

const setCampaignStatus = (status: 'paused' | 'canceled') => (id: string) => db.updateTable('campaigns').set({ status }).where('id', '=', id).execute();

describe('the finish hook: the attempt', () => {
  it('records the call status, end reason and end time on the attempt row', async () => {
    const { callId } = await endedWith('busy', { max_attempts: 1 }, 0);
    const attempt = await rig.attemptOf(callId);
    assert.deepEqual({ status: attempt.status, end_reason: attempt.end_reason, ended_at: new Date(attempt.ended_at as Date).getTime(), attempt: attempt.attempt }, { status: 'busy', end_reason: 'agent_end_call', ended_at: at(12_345).getTime(), attempt: 1 });
  });

  it('ignores a call without an attempt row (not a campaign call): the finish succeeds', async () => {
    const { campaign, contacts, calls } = await dialed({ concurrency: 1 }, [{}, {}]);
    const callId = newId('call');
    await db.transaction().execute((tx) =>
      rig.journal.queue(tx, { id: callId, workspace_id: campaign.workspace_id, agent_id: campaign.agent_id, direction: 'outbound', from_number: null, to_number: '+15550100000', provider: 'x', campaign_id: campaign.id }),
    );
    assert.equal(await rig.finish(callId, 'failed'), true);
    assert.equal((await contactOf(db, contacts[0].id)).status, 'calling');
    assert.equal((await rig.attemptOf(calls[0])).status, 'queued', 'the campaign call\'s attempt untouched');
    assert.equal((await contactOf(db, contacts[1].id)).status, 'pending', 'no refill either');
    assert.deepEqual((await rig.callsOf(campaign.id)).map((c) => c.id).filter((id) => id !== callId), calls);
  });
});

describe('the finish hook: the contact', () => {
  for (const status of ['completed', 'transferred', 'voicemail'] as const) {
    it(`reached (${status}): completed, the attempt kept`, async () => {
      const { contact } = await endedWith(status, { max_attempts: 3 });
      assert.deepEqual([contact.status, contact.attempts, contact.next_attempt_at], ['completed', 1, null]);
    });
  }

  for (const status of ['busy', 'no_answer'] as const) {
    it(`retried (${status}) with attempts left: pending again, due retry_delay_minutes after the end, to the millisecond`, async () => {
      const { contact, campaign } = await endedWith(status, { max_attempts: 3, retry_delay_minutes: 7 }, 1);
      assert.deepEqual([contact.status, contact.attempts], ['pending', 2]);
      assert.equal(new Date(contact.next_attempt_at as Date).getTime(), at(12_345).getTime() + 7 * 60_000);
      assert.equal(new Date(contact.updated_at).getTime(), at(12_345).getTime());
      assert.equal((await rig.campaignOf(campaign.id)).status, 'running', 'a pending contact keeps it open');
    });

    it(`retried (${status}) at max_attempts: failed`, async () => {
      const { contact } = await endedWith(status, { max_attempts: 2 }, 1);
      assert.deepEqual([contact.status, contact.attempts, contact.next_attempt_at], ['failed', 2, null]);
    });
  }

  it('failed: failed, with attempts left', async () => {
    const { contact } = await endedWith('failed', { max_attempts: 5 });
    assert.deepEqual([contact.status, contact.attempts], ['failed', 1]);
    assert.equal(new Date(contact.updated_at).getTime(), at(12_345).getTime());
  });

  it('retried in a canceled campaign: canceled, not pending', async () => {
    const { contact } = await endedWith('no_answer', { max_attempts: 3 }, 0, setCampaignStatus('canceled'));
    assert.equal(contact.status, 'canceled');
  });

  it('retried in a paused campaign: pending, not dialed again', async () => {
    const { contact, campaign } = await endedWith('busy', { max_attempts: 3, retry_delay_minutes: 0 }, 0, setCampaignStatus('paused'));
    assert.deepEqual([contact.status, contact.attempts], ['pending', 1]);
    assert.equal((await rig.callsOf(campaign.id)).length, 1);
  });

  it('canceled in a paused campaign: the attempt given back, pending, no next attempt time', async () => {
    const { contact } = await endedWith('canceled', { max_attempts: 3 }, 1, async (id) => {
      await setCampaignStatus('paused')(id);
      // A due time left on the row must be cleared too.
      await db.updateTable('campaign_contacts').set({ next_attempt_at: at(1) }).where('campaign_id', '=', id).execute();
    });
    assert.deepEqual([contact.status, contact.attempts, contact.next_attempt_at], ['pending', 1, null]);
  });

  it('canceled in a canceled campaign: canceled, the attempt given back', async () => {
    const { contact } = await endedWith('canceled', { max_attempts: 3 }, 0, setCampaignStatus('canceled'));
    assert.deepEqual([contact.status, contact.attempts], ['canceled', 0]);
  });

  it('canceled in a running campaign: given back and dialed again at once, as attempt 1', async () => {
    const { contact, campaign, callId } = await endedWith('canceled', { max_attempts: 1 });
    const calls = await rig.callsOf(campaign.id);
    assert.equal(calls.length, 2);
    assert.deepEqual([contact.status, contact.attempts, contact.call_id], ['calling', 1, calls.find((c) => c.id !== callId)?.id]);
  });

  it('moves only a contact still calling under this call', async () => {
    const moved = async (set: { status?: ContactStatus; call_id?: string }) => {
      const { contact } = await endedWith('completed', {}, 0, (id) => db.updateTable('campaign_contacts').set(set).where('campaign_id', '=', id).execute());
      return contact.status;
    };
    assert.equal(await moved({ call_id: newId('call') }), 'calling', 'another call of the contact');
    assert.equal(await moved({ status: 'skipped' }), 'skipped', 'no longer calling');
  });

  it('moves only the attempt’s contact, not another holding the same call id', async () => {
    const { campaign, contacts, calls } = await dialed({ concurrency: 1 }, [{}]);
    const twin = await insertContact(db, campaign, { status: 'calling', call_id: calls[0] });
    await rig.finish(calls[0], 'completed');
    assert.equal((await contactOf(db, contacts[0].id)).status, 'completed');
    assert.equal((await contactOf(db, twin.id)).status, 'calling');
  });
});

describe('the finish hook: the freed slot', () => {
  it('a running campaign: the next due contact queued in the finish, the calls dialer nudged once', async () => {
    const { contacts, calls } = await dialed({ concurrency: 1 }, [{}, {}]);
    const before = rig.nudges();
    await rig.finish(calls[0], 'completed');
    await rig.settle();
    assert.equal(rig.nudges(), before + 1);
    const next = await contactOf(db, contacts[1].id);
    assert.deepEqual([next.status, next.attempts], ['calling', 1]);
  });

  it('nothing left to queue: no nudge', async () => {
    const { calls } = await dialed({ concurrency: 1 }, [{}]);
    const before = rig.nudges();
    await rig.finish(calls[0], 'completed');
    await rig.settle();
    assert.equal(rig.nudges(), before);
  });

  for (const status of ['paused', 'canceled'] as const) {
    it(`a ${status} campaign: no refill, no nudge, not completed`, async () => {
      const { campaign, contacts, calls } = await dialed({ concurrency: 1 }, [{}, {}]);
      await setCampaignStatus(status)(campaign.id);
      const before = rig.nudges();
      await rig.finish(calls[0], 'completed');
      await rig.settle();
      assert.equal(rig.nudges(), before);
      assert.equal((await contactOf(db, contacts[1].id)).status, 'pending');
      assert.equal((await rig.campaignOf(campaign.id)).status, status);
    });
  }
});

describe('completeIfDone', () => {
  it('the last contact ends: completed once, at now, campaign.completed with its counts', async () => {
    const { campaign, calls, ws } = await dialed({ concurrency: 2, max_attempts: 1, started_at: at(-3_600_000) }, [{}, {}, { status: 'failed' }, { status: 'skipped' }, { status: 'failed' }]);
    await insertTenantEndpoint(db, ws.workspaceId, ['campaign.completed']);
    const first = rig.completions().length;
    clock.set(at(1000));
    await rig.finish(calls[0], 'completed');
    assert.equal((await rig.campaignOf(campaign.id)).status, 'running', 'one contact still calling');
    assert.equal(rig.completions().length, first);
    clock.set(at(2000));
    await rig.finish(calls[1], 'busy');
    const row = await rig.campaignOf(campaign.id);
    assert.deepEqual([row.status, new Date(row.completed_at as Date).getTime(), new Date(row.updated_at).getTime()], ['completed', at(2000).getTime(), at(2000).getTime()]);
    const data = { campaign_id: campaign.id, name: campaign.name, total: 5, completed: 1, failed: 3, started_at: at(-3_600_000).toISOString(), completed_at: at(2000).toISOString() };
    assert.deepEqual(rig.completions().slice(first), [{ workspaceId: campaign.workspace_id, type: 'campaign.completed', tenantOnly: true, data }]);
    assert.deepEqual(await eventDataOf(db, campaign.workspace_id, 'campaign.completed'), [data]);
    clock.set(at(3000));
    await rig.dialer.runDueOnce();
    assert.equal(rig.completions().length, first + 1, 'sent once');
  });

  it('started_at null: sent as null', async () => {
    const { campaign, calls } = await dialed({ started_at: null }, [{}]);
    const first = rig.completions().length;
    await rig.finish(calls[0], 'voicemail');
    assert.deepEqual(rig.completions().slice(first).map((e) => e.data), [{ campaign_id: campaign.id, name: campaign.name, total: 1, completed: 1, failed: 0, started_at: null, completed_at: T0.toISOString() }]);
  });

  it('a running campaign with nothing open completes on a pass; a pending contact not yet due keeps it open', async () => {
    const ws = await seedWorkspace(db);
    const done = await insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId });
    await insertContact(db, done, { status: 'completed' });
    const waiting = await insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId });
    await insertContact(db, waiting, { next_attempt_at: at(1) });
    const first = rig.completions().length;
    assert.equal(await rig.dialer.runDueOnce(), 0);
    assert.equal((await rig.campaignOf(done.id)).status, 'completed');
    assert.equal((await rig.campaignOf(waiting.id)).status, 'running');
    assert.deepEqual(rig.completions().slice(first).map((e) => e.data.campaign_id), [done.id]);
  });
});
