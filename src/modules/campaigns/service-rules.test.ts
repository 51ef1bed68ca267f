import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contactOf, insertCall, insertCampaign, insertContact, seedWorkspace, T0 } from '../../../test/support/campaign-rows.ts';
import { campaignServiceRig, insertPhoneNumber, ms, NOW, refusal } from '../../../test/support/campaign-service-rig.ts';
import { newId } from '../../platform/ids.ts';
import { beginAttempt } from './dialer-sql.ts';
import type { CampaignCreate } from './schemas.ts';
import type { CampaignStatus } from './tables.ts';

// The campaigns service (service.ts, repo.ts) called directly, built as module.ts builds it: the
// state machine (each verb's from-states, its refusals word for word, every column it writes), the
// queued calls withdrawn on pause and cancel and their contacts, create and update with their
// settings checks and caller id, deletion, uploads, and another workspace's rows never found.
// A fast file for mutation testing; campaigns.test.ts and dialer.test.ts go through HTTP.

const rig = await campaignServiceRig();
const { db, service, carrier, announced, races, setup, rowOf } = rig;
const STATUSES: CampaignStatus[] = ['draft', 'ready', 'running', 'paused', 'completed', 'canceled'];

const verbs = {
  start: { run: service.start, from: ['ready', 'paused'], word: 'started' },
  pause: { run: service.pause, from: ['running'], word: 'paused' },
  cancel: { run: service.cancel, from: ['draft', 'ready', 'running', 'paused'], word: 'canceled' },
} as const;

describe('transitions: from-states and refusals', () => {
  for (const [name, verb] of Object.entries(verbs)) {
    it(`${name}: only from ${verb.from.join(', ')}; any other state is 409 invalid_state, nothing written`, async () => {
      for (const status of STATUSES) {
        const { ctx, campaign } = await setup({ status, started_at: null });
        const before = await rowOf(campaign.id);
        if ((verb.from as readonly string[]).includes(status)) {
          const shown = await verb.run(ctx, campaign.id);
          assert.equal(shown.id, campaign.id, status);
          assert.notEqual((await rowOf(campaign.id))?.status, status, status);
          continue;
        }
        const detail = name === 'start' && status === 'draft' ? 'Upload contacts before starting the campaign.' : `A ${status} campaign cannot be ${verb.word}.`;
        assert.deepEqual(await refusal(verb.run(ctx, campaign.id)), { status: 409, code: 'invalid_state', detail }, `${name} ${status}`);
        assert.deepEqual(await rowOf(campaign.id), before, `${name} ${status}`);
      }
    });

    it(`${name}: another workspace's campaign (or none) is 404 not_found, untouched`, async () => {
      const { campaign } = await setup({ status: verb.from[0] });
      const stranger = await setup();
      const before = await rowOf(campaign.id);
      for (const id of [campaign.id, newId('cmp')]) assert.deepEqual(await refusal(verb.run(stranger.ctx, id)), { status: 404, code: 'not_found', detail: 'campaign not found' });
      assert.deepEqual(await rowOf(campaign.id), before);
    });
  }

  it('start: an empty wallet is 402 (a draft is refused first for its contacts); one micro-dollar is enough', async () => {
    for (const [status, balance, expected] of [
      ['ready', 0, { status: 402, code: 'insufficient_balance', detail: 'The wallet balance is zero or below: top up to run campaigns.' }],
      ['draft', 0, { status: 409, code: 'invalid_state', detail: 'Upload contacts before starting the campaign.' }],
    ] as const) {
      const { ctx, campaign } = await setup({ status }, balance);
      assert.deepEqual(await refusal(service.start(ctx, campaign.id)), expected, status);
      assert.equal((await rowOf(campaign.id))?.status, status);
    }
    const { ctx, campaign } = await setup({ status: 'ready' }, 1);
    assert.equal((await service.start(ctx, campaign.id)).status, 'running');
  });
});

describe('transitions: what each writes', () => {
  it('start from ready: running, started_at and updated_at now, pause_reason cleared, the dialers woken once', async () => {
    const { ctx, campaign } = await setup({ status: 'ready', started_at: null, pause_reason: 'insufficient_balance' });
    const before = await rowOf(campaign.id);
    const woken = announced.count;
    const shown = await service.start(ctx, campaign.id);
    assert.deepEqual(await rowOf(campaign.id), { ...before, status: 'running', started_at: NOW.getTime(), pause_reason: null, updated_at: NOW.getTime() });
    assert.equal(announced.count, woken + 1);
    assert.equal(shown.status, 'running');
    assert.equal(shown.started_at, NOW.toISOString());
    assert.equal(shown.pause_reason, null);
  });

  it('start from paused (resume): keeps the first started_at, clears pause_reason', async () => {
    const { ctx, campaign } = await setup({ status: 'paused', started_at: T0, pause_reason: 'insufficient_balance' });
    const before = await rowOf(campaign.id);
    await service.start(ctx, campaign.id);
    assert.deepEqual(await rowOf(campaign.id), { ...before, status: 'running', pause_reason: null, updated_at: NOW.getTime() });
  });

  it('pause: paused, pause_reason cleared, updated_at now, nothing else; the dialers not woken', async () => {
    const { ctx, campaign } = await setup({ status: 'running', pause_reason: 'insufficient_balance' });
    const before = await rowOf(campaign.id);
    const woken = announced.count;
    const shown = await service.pause(ctx, campaign.id);
    assert.deepEqual(await rowOf(campaign.id), { ...before, status: 'paused', pause_reason: null, updated_at: NOW.getTime() });
    assert.equal(announced.count, woken);
    assert.equal(shown.status, 'paused');
  });

  it('cancel: canceled, canceled_at and updated_at now; its pending contacts canceled, no others', async () => {
    const { ctx, campaign, workspaceId, agentId } = await setup({ status: 'running' });
    const other = await insertCampaign(db, { workspace_id: workspaceId, agent_id: agentId });
    const pending = await insertContact(db, campaign, { next_attempt_at: T0, attempts: 1 });
    const kept = await Promise.all((['calling', 'completed', 'failed', 'skipped'] as const).map((status) => insertContact(db, campaign, { status, next_attempt_at: T0 })));
    const elsewhere = await insertContact(db, other);
    const before = await rowOf(campaign.id);
    const shown = await service.cancel(ctx, campaign.id);
    assert.deepEqual(await rowOf(campaign.id), { ...before, status: 'canceled', canceled_at: NOW.getTime(), updated_at: NOW.getTime() });
    assert.deepEqual(await contactOf(db, pending.id), { ...pending, status: 'canceled', next_attempt_at: null, updated_at: NOW });
    for (const contact of [...kept, elsewhere]) assert.deepEqual(await contactOf(db, contact.id), contact);
    assert.equal(shown.status, 'canceled');
    assert.equal(shown.stats.canceled, 1);
  });
});

describe('transitions: queued calls withdrawn', () => {
  async function withCalls(status: CampaignStatus) {
    const s = await setup({ status });
    const other = await insertCampaign(db, { workspace_id: s.workspaceId, agent_id: s.agentId });
    const queued = await insertContact(db, s.campaign, { attempts: 1 });
    const ringing = await insertContact(db, s.campaign);
    const callIds = { queued: await insertCall(db, s.campaign, 'queued'), ringing: await insertCall(db, s.campaign, 'ringing'), other: await insertCall(db, other, 'queued') };
    await beginAttempt(db, queued, callIds.queued, T0);
    await beginAttempt(db, ringing, callIds.ringing, T0);
    const callStatus = async (id: string) => (await db.selectFrom('calls').select(['status', 'end_reason']).where('id', '=', id).executeTakeFirstOrThrow()) as object;
    return { ...s, queued, ringing, callIds, callStatus };
  }

  for (const [verb, contactStatus] of [['pause', 'pending'], ['cancel', 'canceled']] as const) {
    it(`${verb}: its queued calls canceled (api_hangup), their contacts ${contactStatus} with the attempt given back; live calls and other campaigns' kept; no event`, async () => {
      const s = await withCalls('running');
      await service[verb](s.ctx, s.campaign.id);
      assert.deepEqual(await s.callStatus(s.callIds.queued), { status: 'canceled', end_reason: 'api_hangup' });
      assert.deepEqual(await s.callStatus(s.callIds.ringing), { status: 'ringing', end_reason: null });
      assert.deepEqual(await s.callStatus(s.callIds.other), { status: 'queued', end_reason: null });
      const queued = await contactOf(db, s.queued.id);
      assert.deepEqual({ status: queued.status, attempts: queued.attempts, next_attempt_at: queued.next_attempt_at }, { status: contactStatus, attempts: 1, next_attempt_at: null });
      assert.equal((await contactOf(db, s.ringing.id)).status, 'calling');
      const attempt = await db.selectFrom('campaign_attempts').select(['status', 'end_reason']).where('call_id', '=', s.callIds.queued).executeTakeFirstOrThrow();
      assert.deepEqual({ ...attempt }, { status: 'canceled', end_reason: 'api_hangup' });
      const events = await db.selectFrom('webhook_events').select('type').where('workspace_id', '=', s.workspaceId).execute();
      assert.deepEqual(events, []);
    });
  }

  it('a call a worker claims between the read and the withdrawal is left to ring', async () => {
    const s = await withCalls('running');
    races.afterQueuedRead = async () => void (await db.updateTable('calls').set({ status: 'ringing' }).where('id', '=', s.callIds.queued).execute());
    await service.pause(s.ctx, s.campaign.id).finally(() => delete races.afterQueuedRead);
    assert.deepEqual(await s.callStatus(s.callIds.queued), { status: 'ringing', end_reason: null });
  });

  it('a refused pause or cancel withdraws nothing', async () => {
    for (const [verb, status] of [['pause', 'paused'], ['cancel', 'completed']] as const) {
      const s = await withCalls(status);
      await refusal(service[verb](s.ctx, s.campaign.id));
      assert.deepEqual(await s.callStatus(s.callIds.queued), { status: 'queued', end_reason: null }, verb);
      assert.equal((await contactOf(db, s.queued.id)).status, 'calling', verb);
    }
  });
});

// A window with no zone: the service makes it UTC.
const WINDOW = { days: ['mon'], start: '09:00', end: '17:00' } as NonNullable<CampaignCreate['calling_window']>;

describe('create', () => {
  it('a draft with the defaults, written at now in the workspace', async () => {
    const { ctx, workspaceId, agentId } = await setup();
    const shown = await service.create(ctx, { name: 'Renewals', agent_id: agentId });
    const row = await rowOf(shown.id);
    assert.match(shown.id, /^cmp_[0-9a-z]{26}$/);
    assert.deepEqual(row, {
      ...row,
      workspace_id: workspaceId,
      agent_id: agentId,
      name: 'Renewals',
      from_number: null,
      status: 'draft',
      concurrency: 2,
      max_attempts: 1,
      retry_delay_minutes: 60,
      calling_window: null,
      default_country: null,
      simulation: null,
      variable_names: [],
      pause_reason: null,
      started_at: null,
      created_at: NOW.getTime(),
      updated_at: NOW.getTime(),
    });
    assert.deepEqual(shown.stats, { total: 0, pending: 0, in_progress: 0, completed: 0, failed: 0, skipped: 0, canceled: 0 });
  });

  it('the given settings kept; a window without a zone is UTC', async () => {
    const { ctx, agentId } = await setup();
    const simulation = { persona: 'A busy parent' } as never;
    const body = { name: 'R', agent_id: agentId, concurrency: 7, max_attempts: 3, retry_delay_minutes: 0, calling_window: WINDOW, default_country: 'FR', simulation, from_number: '+1 555 010 0200' };
    const row = await rowOf((await service.create(ctx, body)).id);
    assert.deepEqual(
      { ...row, id: undefined },
      { ...row, id: undefined, concurrency: 7, max_attempts: 3, retry_delay_minutes: 0, calling_window: { ...WINDOW, timezone: 'UTC' }, default_country: 'FR', simulation, from_number: '+15550100200' },
    );
    const zoned = await service.create(ctx, { name: 'R', agent_id: agentId, calling_window: { ...WINDOW, timezone: 'Asia/Tokyo' } });
    assert.deepEqual(zoned.calling_window, { ...WINDOW, timezone: 'Asia/Tokyo' });
  });

  it("another workspace's agent is 422 on agent_id; nothing written", async () => {
    const { ctx, workspaceId } = await setup();
    const stranger = await setup();
    const res = await refusal(service.create(ctx, { name: 'R', agent_id: stranger.agentId }));
    assert.deepEqual(res, { status: 422, code: 'validation_failed', detail: 'agent_id: no such agent in this workspace', errors: [{ path: 'agent_id', message: 'no such agent in this workspace' }] });
    const rows = await db.selectFrom('campaigns').select('id').where('workspace_id', '=', workspaceId).execute();
    assert.equal(rows.length, 1);
  });
});

describe('settings checks (create and update)', () => {
  const field = (path: string, message: string) => ({ status: 422, code: 'validation_failed', detail: `${path}: ${message}`, errors: [{ path, message }] });
  const refused = [
    [{ default_country: 'ZZ' }, field('default_country', 'not a country libphonenumber knows')],
    [{ calling_window: { ...WINDOW, timezone: 'Mars/Olympus' } }, field('calling_window.timezone', 'not an IANA time zone')],
    [{ calling_window: { ...WINDOW, end: '09:00' } }, field('calling_window.end', 'must differ from start')],
    [{ from_number: 'not a number' }, field('from_number', 'must be a possible phone number (E.164, e.g. +15550100200)')],
  ] as const;
  const accepted = [{ default_country: 'US' }, { calling_window: { ...WINDOW, end: '09:01' } }, { calling_window: { ...WINDOW, end: '08:59' } }, { calling_window: null }, { default_country: null }];

  it('refused with the field and its message, nothing written; the nearest values accepted', async () => {
    const { ctx, agentId, campaign } = await setup({ status: 'ready' });
    const before = await rowOf(campaign.id);
    for (const [settings, expected] of refused) {
      assert.deepEqual(await refusal(service.create(ctx, { name: 'R', agent_id: agentId, ...settings } as never)), expected);
      assert.deepEqual(await refusal(service.update(ctx, campaign.id, settings as never)), expected);
    }
    assert.deepEqual(await rowOf(campaign.id), before);
    for (const settings of accepted) {
      assert.equal((await service.create(ctx, { name: 'R', agent_id: agentId, ...settings } as never)).status, 'draft', JSON.stringify(settings));
      await service.update(ctx, campaign.id, settings as never);
    }
  });
});

describe('from_number', () => {
  const noCallerId = (detail: string) => ({ status: 422, code: 'no_caller_id', detail });
  const unowned = noCallerId("from_number is not one of this workspace's phone numbers.");

  it('simulation: none is null; any possible number kept as E.164', async () => {
    const { ctx, agentId, campaign } = await setup({ status: 'ready', from_number: '+15550100999' });
    assert.equal((await service.create(ctx, { name: 'R', agent_id: agentId })).from_number, null);
    assert.equal((await service.create(ctx, { name: 'R', agent_id: agentId, from_number: null })).from_number, null);
    assert.equal((await service.create(ctx, { name: 'R', agent_id: agentId, from_number: '+1 (555) 010-0201' })).from_number, '+15550100201');
    assert.equal((await service.update(ctx, campaign.id, { name: 'S' })).from_number, '+15550100999', 'not given: kept');
    assert.equal((await service.update(ctx, campaign.id, { from_number: null })).from_number, null);
  });

  it("a carrier: one of the workspace's numbers only; none, another workspace's or nobody's is 422 no_caller_id", async () => {
    const { ctx, agentId, workspaceId, campaign } = await setup({ status: 'ready' });
    const stranger = await setup();
    const [mine, theirs] = ['+15550107001', '+15550107002'];
    await insertPhoneNumber(db, workspaceId, mine);
    await insertPhoneNumber(db, stranger.workspaceId, theirs);
    const create = (from_number?: string | null) => carrier.create(ctx, { name: 'R', agent_id: agentId, ...(from_number === undefined ? {} : { from_number }) });
    assert.equal((await create('+1 555 010 7001')).from_number, mine);
    const none = noCallerId("No caller id: pass from_number, one of the workspace's phone numbers.");
    assert.deepEqual(await refusal(create()), none);
    assert.deepEqual(await refusal(create(null)), none);
    assert.deepEqual(await refusal(create(theirs)), unowned);
    assert.deepEqual(await refusal(create('+15550107003')), unowned);
    assert.deepEqual(await refusal(carrier.update(ctx, campaign.id, { from_number: theirs })), unowned);
    assert.deepEqual(await refusal(carrier.update(ctx, campaign.id, { from_number: null })), none);
    assert.equal((await carrier.update(ctx, campaign.id, { from_number: mine })).from_number, mine);
    assert.equal((await carrier.update(ctx, campaign.id, { name: 'kept' })).from_number, mine);
  });
});

describe('update', () => {
  it('writes the given settings and updated_at, nothing else; null clears the window and the simulation', async () => {
    const { ctx, workspaceId, campaign } = await setup({ status: 'paused', calling_window: JSON.stringify({ ...WINDOW, timezone: 'UTC' }), simulation: JSON.stringify({ persona: 'x' }) });
    const agent2 = (await seedWorkspace(db)).agentId;
    await db.updateTable('agents').set({ workspace_id: workspaceId }).where('id', '=', agent2).execute();
    const before = await rowOf(campaign.id);
    await service.update(ctx, campaign.id, { name: 'N' });
    assert.deepEqual(await rowOf(campaign.id), { ...before, name: 'N', updated_at: NOW.getTime() });
    const body = { agent_id: agent2, concurrency: 9, max_attempts: 4, retry_delay_minutes: 5, default_country: 'GB', calling_window: null, simulation: null };
    await service.update(ctx, campaign.id, body);
    assert.deepEqual(await rowOf(campaign.id), { ...before, ...body, name: 'N', updated_at: NOW.getTime() });
    await service.update(ctx, campaign.id, { calling_window: WINDOW, simulation: { persona: 'y' } as never });
    const row = await rowOf(campaign.id);
    assert.deepEqual([row?.calling_window, row?.simulation, row?.agent_id], [{ ...WINDOW, timezone: 'UTC' }, { persona: 'y' }, agent2]);
    const noAgent = { status: 422, code: 'validation_failed', detail: 'agent_id: no such agent in this workspace', errors: [{ path: 'agent_id', message: 'no such agent in this workspace' }] };
    assert.deepEqual(await refusal(service.update(ctx, campaign.id, { agent_id: (await setup()).agentId })), noAgent);
    assert.equal((await rowOf(campaign.id))?.agent_id, agent2);
  });

  it('any state but completed and canceled (409, nothing written); wakes the dialers for a running one only', async () => {
    for (const status of STATUSES) {
      const { ctx, campaign } = await setup({ status });
      const woken = announced.count;
      if (status === 'completed' || status === 'canceled') {
        assert.deepEqual(await refusal(service.update(ctx, campaign.id, { name: 'N' })), { status: 409, code: 'invalid_state', detail: `A ${status} campaign cannot be changed.` });
        assert.equal((await rowOf(campaign.id))?.name, campaign.name);
      } else {
        assert.equal((await service.update(ctx, campaign.id, { name: 'N' })).name, 'N');
      }
      assert.equal(announced.count, woken + (status === 'running' ? 1 : 0), status);
    }
  });
});

describe('remove', () => {
  it('any state but running; a running one is 409 and kept; another workspace gets 404', async () => {
    for (const status of STATUSES) {
      const { ctx, campaign } = await setup({ status });
      assert.deepEqual(await refusal(service.remove((await setup()).ctx, campaign.id)), { status: 404, code: 'not_found', detail: 'campaign not found' });
      if (status === 'running') {
        assert.deepEqual(await refusal(service.remove(ctx, campaign.id)), { status: 409, code: 'invalid_state', detail: 'A running campaign cannot be deleted: pause or cancel it first.' });
        assert.ok(await rowOf(campaign.id));
      } else {
        await service.remove(ctx, campaign.id);
        assert.equal(await rowOf(campaign.id), undefined, status);
      }
    }
  });
});

describe('upload', () => {
  const csv = (...lines: string[]) => new TextEncoder().encode(`${['phone,name,city', ...lines].join('\n')}\n`);
  const contactsOf = (id: string) => db.selectFrom('campaign_contacts').selectAll().where('campaign_id', '=', id).orderBy('row_number').execute();

  it('a draft becomes ready with its callable contacts; the do-not-call list of this workspace only; duplicates counted', async () => {
    const { ctx, workspaceId, campaign } = await setup({ status: 'draft', variable_names: JSON.stringify(['name', 'old']) });
    const stranger = await setup();
    for (const [ws, number] of [[workspaceId, '+15550108002'], [stranger.workspaceId, '+15550108003']]) await db.insertInto('dnc_numbers').values({ workspace_id: ws, number, reason: null, created_at: T0 }).execute();
    const result = await service.upload(ctx, campaign.id, csv('+15550108001,Ann,Paris', '+15550108002,Bob,Rome', '+15550108003,Cy,Oslo', '+15550108001,Ann,Paris', 'nope,Dee,Lima'));
    assert.deepEqual({ ...result, rejected: result.rejected.length }, { accepted: 2, rejected: 1, duplicates: 1, skipped_dnc: 1 });
    const rows = await contactsOf(campaign.id);
    assert.deepEqual(
      rows.map((r) => [r.phone, r.workspace_id, r.status, r.row_number, r.variables, ms(r.created_at), ms(r.updated_at)]),
      [
        ['+15550108001', workspaceId, 'pending', 2, { name: 'Ann', city: 'Paris' }, NOW.getTime(), NOW.getTime()],
        ['+15550108003', workspaceId, 'pending', 4, { name: 'Cy', city: 'Oslo' }, NOW.getTime(), NOW.getTime()],
      ],
    );
    const row = await rowOf(campaign.id);
    assert.deepEqual([row?.status, row?.variable_names, row?.updated_at], ['ready', ['name', 'old', 'city'], NOW.getTime()]);
    const again = await service.upload(ctx, campaign.id, csv('+15550108001,Ann,Paris', '+15550108004,Eve,Kyiv'));
    assert.deepEqual({ ...again, rejected: again.rejected.length }, { accepted: 1, rejected: 0, duplicates: 1, skipped_dnc: 0 });
    assert.equal((await rowOf(campaign.id))?.status, 'ready');
  });

  it('a draft with nothing callable stays a draft; any other state but ready is 409; refusals of the file', async () => {
    const { ctx, campaign, workspaceId } = await setup({ status: 'draft' });
    await db.insertInto('dnc_numbers').values({ workspace_id: workspaceId, number: '+15550108005', reason: null, created_at: T0 }).execute();
    assert.equal((await service.upload(ctx, campaign.id, csv('+15550108005,A,B'))).skipped_dnc, 1);
    assert.equal((await rowOf(campaign.id))?.status, 'draft');
    const tooBig = new Uint8Array(10 * 1024 * 1024 + 1);
    assert.deepEqual(await refusal(service.upload(ctx, campaign.id, tooBig)), { status: 413, code: 'payload_too_large', detail: 'The upload was refused whole: the file is larger than 10485760 bytes.' });
    const wide = new TextEncoder().encode(`phone,${Array.from({ length: 51 }, (_, i) => `v${i}`).join(',')}\n`);
    assert.deepEqual(await refusal(service.upload(ctx, campaign.id, wide)), { status: 422, code: 'validation_failed', detail: 'file: at most 50 variable columns', errors: [{ path: 'file', message: 'at most 50 variable columns' }] });
    const running = await setup({ status: 'running' });
    const refusedFirst = { status: 409, code: 'invalid_state', detail: 'Contacts can be added to a draft or ready campaign only (this one is running).' };
    assert.deepEqual(await refusal(service.upload(running.ctx, running.campaign.id, tooBig)), refusedFirst, 'refused before the file is read');
    races.duringParse = async () => void (await db.updateTable('campaigns').set({ status: 'running' }).where('id', '=', campaign.id).execute());
    assert.deepEqual(await refusal(service.upload(ctx, campaign.id, csv('+15550108008,A,B')).finally(() => delete races.duringParse)), refusedFirst, 'started while parsed');
    assert.deepEqual(await contactsOf(campaign.id), []);
    for (const status of ['running', 'paused', 'completed', 'canceled'] as const) {
      const s = await setup({ status });
      const detail = `Contacts can be added to a draft or ready campaign only (this one is ${status}).`;
      assert.deepEqual(await refusal(service.upload(s.ctx, s.campaign.id, csv('+15550108006,A,B'))), { status: 409, code: 'invalid_state', detail });
      assert.deepEqual(await contactsOf(s.campaign.id), []);
    }
    assert.deepEqual(await refusal(service.upload((await setup()).ctx, campaign.id, csv('+15550108007,A,B'))), { status: 404, code: 'not_found', detail: 'campaign not found' });
  });
});

describe('reads: another workspace sees nothing', () => {
  it('get, list, contacts, contact, results and stats', async () => {
    const { ctx, campaign, workspaceId, agentId } = await setup({ status: 'running' });
    const paused = await insertCampaign(db, { workspace_id: workspaceId, agent_id: agentId, status: 'paused' });
    const contact = await insertContact(db, campaign);
    await insertContact(db, campaign, { status: 'completed' });
    const stranger = (await setup()).ctx;
    const gone = { status: 404, code: 'not_found', detail: 'campaign not found' };
    assert.equal((await service.get(ctx, campaign.id)).stats.total, 2);
    const page = { limit: 10 };
    assert.deepEqual((await service.list(ctx, page)).data.map((c) => c.id), [paused.id, campaign.id]);
    assert.deepEqual((await service.list(ctx, page, 'paused')).data.map((c) => c.id), [paused.id]);
    assert.deepEqual((await service.list(stranger, page)).data.map((c) => c.id), [(await db.selectFrom('campaigns').select('id').where('workspace_id', '=', stranger.workspaceId).executeTakeFirstOrThrow()).id]);
    assert.deepEqual((await service.contacts(ctx, campaign.id, page, 'pending')).data.map((c) => c.id), [contact.id]);
    assert.equal((await service.contact(ctx, campaign.id, contact.id)).id, contact.id);
    assert.equal((await service.results(ctx, campaign.id)).filename, `${campaign.id}-results.csv`);
    assert.equal((await service.stats(ctx, campaign.id)).total, 2);
    for (const read of [service.get, service.results, service.stats]) assert.deepEqual(await refusal(read(stranger, campaign.id)), gone);
    assert.deepEqual(await refusal(service.contacts(stranger, campaign.id, page)), gone);
    assert.deepEqual(await refusal(service.contact(stranger, campaign.id, contact.id)), { status: 404, code: 'not_found', detail: 'contact not found' });
    assert.deepEqual(await refusal(service.contact(ctx, paused.id, contact.id)), { status: 404, code: 'not_found', detail: 'contact not found' });
  });
});
