import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { presentAttempt, presentCampaign, presentContact, statsOf } from './present.ts';
import type { AttemptRow, CampaignRow, ContactCounts, ContactRow } from './repo.ts';

// How the API shows the campaigns' rows (present.ts), called directly: every field, each from its
// own column, timestamps as ISO (from a Date or from a string with an offset), nulls kept null.

const COUNTS: ContactCounts = { total: 21, pending: 1, calling: 2, completed: 3, failed: 4, skipped: 5, canceled: 6 };
const STATS = { total: 21, pending: 1, in_progress: 2, completed: 3, failed: 4, skipped: 5, canceled: 6 };
const WINDOW = { days: ['mon', 'fri'], start: '09:00', end: '17:30', timezone: 'Europe/Paris' };
const SIMULATION = { caller_script: ['Hello', 'Bye'] };

const campaignRow = (fields: Partial<CampaignRow> = {}): CampaignRow => ({
  id: 'cmp_1',
  workspace_id: 'ws_1',
  agent_id: 'agent_1',
  name: 'November reminders',
  from_number: '+15555550100',
  status: 'paused',
  concurrency: 7,
  max_attempts: 3,
  retry_delay_minutes: 45,
  calling_window: WINDOW as never,
  default_country: 'GB',
  simulation: SIMULATION as never,
  variable_names: ['name'] as never,
  pause_reason: 'insufficient_balance',
  started_at: new Date('2026-11-23T10:00:00.000Z'),
  completed_at: '2026-11-24T12:30:00+01:00' as never,
  canceled_at: null,
  created_at: new Date('2026-11-20T08:00:00.000Z'),
  updated_at: '2026-11-21 09:15:00.5+00' as never,
  ...fields,
});

describe('statsOf', () => {
  it('each count under its name, calling shown as in_progress', () => {
    assert.deepEqual(statsOf(COUNTS), STATS);
  });
});

describe('presentCampaign', () => {
  it('every field, the timestamps as ISO', () => {
    assert.deepEqual(presentCampaign(campaignRow(), COUNTS), {
      id: 'cmp_1',
      name: 'November reminders',
      agent_id: 'agent_1',
      from_number: '+15555550100',
      status: 'paused',
      pause_reason: 'insufficient_balance',
      concurrency: 7,
      max_attempts: 3,
      retry_delay_minutes: 45,
      calling_window: WINDOW,
      default_country: 'GB',
      simulation: SIMULATION,
      stats: STATS,
      started_at: '2026-11-23T10:00:00.000Z',
      completed_at: '2026-11-24T11:30:00.000Z',
      created_at: '2026-11-20T08:00:00.000Z',
      updated_at: '2026-11-21T09:15:00.500Z',
    });
  });

  it('nulls stay null', () => {
    const row = campaignRow({ from_number: null, pause_reason: null, calling_window: null, default_country: null, simulation: null, started_at: null, completed_at: null });
    const shown = presentCampaign(row, COUNTS);
    assert.deepEqual(
      [shown.from_number, shown.pause_reason, shown.calling_window, shown.default_country, shown.simulation, shown.started_at, shown.completed_at],
      [null, null, null, null, null, null, null],
    );
  });
});

describe('presentContact', () => {
  const contactRow = (fields: Partial<ContactRow> = {}): ContactRow => ({
    id: 'cnt_1',
    campaign_id: 'cmp_1',
    workspace_id: 'ws_1',
    row_number: 17,
    phone: '+15555550101',
    variables: { name: 'Ann', note: '' } as never,
    timezone: 'America/Chicago',
    status: 'failed',
    attempts: 2,
    next_attempt_at: '2026-11-25T10:00:00-05:00' as never,
    call_id: 'call_9',
    created_at: new Date('2026-11-20T08:00:00.000Z'),
    updated_at: new Date('2026-11-22T08:00:00.123Z'),
    ...fields,
  });

  it('every field: the file line as row, the timestamps as ISO', () => {
    assert.deepEqual(presentContact(contactRow()), {
      id: 'cnt_1',
      campaign_id: 'cmp_1',
      row: 17,
      phone: '+15555550101',
      status: 'failed',
      attempts: 2,
      next_attempt_at: '2026-11-25T15:00:00.000Z',
      call_id: 'call_9',
      timezone: 'America/Chicago',
      variables: { name: 'Ann', note: '' },
      created_at: '2026-11-20T08:00:00.000Z',
      updated_at: '2026-11-22T08:00:00.123Z',
    });
  });

  it('nulls stay null', () => {
    const shown = presentContact(contactRow({ next_attempt_at: null, call_id: null, timezone: null }));
    assert.deepEqual([shown.next_attempt_at, shown.call_id, shown.timezone], [null, null, null]);
  });
});

describe('presentAttempt', () => {
  const attemptRow = (fields: Partial<AttemptRow> = {}): AttemptRow => ({
    call_id: 'call_9',
    contact_id: 'cnt_1',
    campaign_id: 'cmp_1',
    attempt: 2,
    status: 'no_answer',
    end_reason: 'no_answer',
    created_at: '2026-11-23T11:00:00+01:00' as never,
    ended_at: new Date('2026-11-23T10:01:30.000Z'),
    ...fields,
  });

  it('every field, the timestamps as ISO', () => {
    assert.deepEqual(presentAttempt(attemptRow()), {
      attempt: 2,
      call_id: 'call_9',
      status: 'no_answer',
      end_reason: 'no_answer',
      created_at: '2026-11-23T10:00:00.000Z',
      ended_at: '2026-11-23T10:01:30.000Z',
    });
  });

  it('an attempt not ended yet: null end reason and end', () => {
    assert.deepEqual(presentAttempt(attemptRow({ status: 'queued', end_reason: null, ended_at: null })), {
      attempt: 2,
      call_id: 'call_9',
      status: 'queued',
      end_reason: null,
      created_at: '2026-11-23T10:00:00.000Z',
      ended_at: null,
    });
  });
});
