import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { manualClock } from '../../platform/clock.ts';
import { SANDBOX_NUMBERS } from '../../providers/telephony/sandbox.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';
import { isTimeZone, isWindowOpen } from './calling-window.ts';
import type { CallingWindow } from './tables.ts';
import { action, createCampaign, uploadCsv } from './test-helpers.ts';

// The calling window in each contact's time zone, with a clock the test moves: contacts outside
// it wait; a window ending before it starts wraps past midnight; a busy contact's retry waits for
// retry_delay_minutes.

describe('calling window (pure)', () => {
  const office: CallingWindow = { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00', timezone: 'Europe/Paris' };
  const night: CallingWindow = { days: ['fri'], start: '22:00', end: '02:00', timezone: 'UTC' };

  it('is open on its days between start and end, in the zone given', () => {
    // Monday 23 November 2026, 08:30 UTC = 09:30 in Paris, 03:30 in New York.
    const at = new Date('2026-11-23T08:30:00Z');
    assert.equal(isWindowOpen(office, null, at), true);
    assert.equal(isWindowOpen(office, 'America/New_York', at), false);
    assert.equal(isWindowOpen(office, 'Asia/Tokyo', at), false, '17:30 in Tokyo: after the end');
    assert.equal(isWindowOpen(office, null, new Date('2026-11-22T10:00:00Z')), false, 'Sunday');
    assert.equal(isWindowOpen(office, null, new Date('2026-11-23T16:00:00Z')), false, '17:00 in Paris: the end is excluded');
  });

  it('opens at its start minute exactly and closes at its end minute exactly', () => {
    // Paris is UTC+1 in November.
    for (const [at, open] of [['07:59', false], ['08:00', true], ['15:59', true], ['16:00', false]] as const) {
      assert.equal(isWindowOpen(office, null, new Date(`2026-11-23T${at}:00Z`)), open, `Monday ${at} UTC`);
    }
    for (const [at, open] of [['2026-11-27T21:59', false], ['2026-11-27T22:00', true], ['2026-11-28T00:00', true], ['2026-11-28T01:59', true], ['2026-11-28T02:00', false]] as const) {
      assert.equal(isWindowOpen(night, null, new Date(`${at}:00Z`)), open, at);
    }
  });

  it('wraps past midnight when the end is before the start: the early hours belong to the day it opened', () => {
    assert.equal(isWindowOpen(night, null, new Date('2026-11-27T23:00:00Z')), true, 'Friday 23:00');
    assert.equal(isWindowOpen(night, null, new Date('2026-11-28T01:30:00Z')), true, 'Saturday 01:30, the Friday window');
    assert.equal(isWindowOpen(night, null, new Date('2026-11-28T02:00:00Z')), false, 'Saturday 02:00');
    assert.equal(isWindowOpen(night, null, new Date('2026-11-27T01:30:00Z')), false, 'Friday 01:30 belongs to Thursday');
    assert.equal(isWindowOpen(night, null, new Date('2026-11-27T21:59:00Z')), false);
  });

  it('counts the minutes of its start and end, not only the hours', () => {
    const halfPast: CallingWindow = { days: ['mon'], start: '09:30', end: '16:45', timezone: 'UTC' };
    for (const [at, open] of [['09:15', false], ['09:29', false], ['09:30', true], ['09:45', true], ['16:44', true], ['16:45', false]] as const) {
      assert.equal(isWindowOpen(halfPast, null, new Date(`2026-11-23T${at}:00Z`)), open, `Monday ${at}`);
    }
  });

  it('knows an IANA time zone from anything else', () => {
    for (const zone of ['UTC', 'Europe/Paris', 'America/Argentina/Buenos_Aires']) assert.equal(isTimeZone(zone), true, zone);
    for (const zone of ['', 'Mars/Olympus_Mons', 'Europe/Pariss', `Europe/${'x'.repeat(60)}`]) assert.equal(isTimeZone(zone), false, zone);
  });
});

describe('calling window (dialer, fake clock)', () => {
  it("dials each contact only inside the window in its own zone, and retries a busy one after the delay", async () => {
    const clock = manualClock(new Date('2026-11-23T08:30:00Z'));
    const t = await buildTestApp({ env: { SANDBOX_SPEED: '100' }, clock });
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { max_duration_seconds: 10 });
    const campaign = await createCampaign(t, user, {
      agent_id: agent.id,
      concurrency: 10,
      max_attempts: 2,
      retry_delay_minutes: 30,
      calling_window: { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00', timezone: 'Europe/Paris' },
    });
    await uploadCsv(t, user, campaign.id, `phone,timezone\n+15550100500,\n+15550100501,America/New_York\n+15550100502,Asia/Tokyo\n${SANDBOX_NUMBERS.busy},\n`);
    await action(t, user, campaign.id, 'start');
    const dialed = async () =>
      (await t.platform.db.selectFrom('calls').select('to_number').where('campaign_id', '=', campaign.id).where('status', '<>', 'canceled').orderBy('to_number').execute()).map((c) => c.to_number);

    // 09:30 in Paris, 03:30 in New York, 17:30 in Tokyo: the two Paris contacts only.
    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 2);
    assert.deepEqual(await dialed(), [SANDBOX_NUMBERS.busy, '+15550100500']);

    // Run those calls to their end: the busy one waits 30 minutes for its retry.
    await t.modules.calls.worker.runDueOnce();
    for (let i = 0; i < 600; i++) {
      const open = await t.platform.db.selectFrom('campaign_contacts').select('id').where('campaign_id', '=', campaign.id).where('status', '=', 'calling').execute();
      if (open.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const busy = (await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/contacts?status=pending`, ...as(user) })).json().data.find((c: { phone: string }) => c.phone === SANDBOX_NUMBERS.busy);
    assert.equal(busy.attempts, 1);
    assert.equal(busy.next_attempt_at, new Date(clock.now().getTime() + 30 * 60_000).toISOString());
    clock.advance(29 * 60_000);
    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 0, 'neither the retry (29 min) nor New York (04:59) is due');

    // 14:30 UTC: 09:30 in New York, 15:30 in Paris; Tokyo 23:30 still waits.
    clock.set(new Date('2026-11-23T14:30:00Z'));
    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 2);
    assert.deepEqual(await dialed(), [SANDBOX_NUMBERS.busy, SANDBOX_NUMBERS.busy, '+15550100500', '+15550100501']);

    // Tuesday 00:30 UTC = 09:30 in Tokyo.
    clock.set(new Date('2026-11-24T00:30:00Z'));
    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 1);
    // (Read from the table: the user's access token has expired by this clock.)
    const tokyo = await t.platform.db.selectFrom('campaign_contacts').selectAll().where('campaign_id', '=', campaign.id).where('phone', '=', '+15550100502').executeTakeFirstOrThrow();
    assert.equal(tokyo.status, 'calling');
    assert.equal(tokyo.attempts, 1);
  });
});
