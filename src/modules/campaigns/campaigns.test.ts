import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { multipartForm } from '../../../test/support/multipart.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';
import { action, createCampaign, uploadCsv } from './test-helpers.ts';

// Campaigns over HTTP: CRUD, uploads of real spreadsheet exports (test/fixtures/campaigns/), the
// limits, contacts and the state machine. Dialing is in dialer.test.ts.

const t = await buildTestApp();
const fixture = (name: string) => fs.readFileSync(new URL(`../../../test/fixtures/campaigns/${name}`, import.meta.url));

describe('campaigns: CRUD and state machine', () => {
  it('creates a draft with defaults, reads, lists, updates and deletes it', async () => {
    const user = await signUp(t);
    const created = await createCampaign(t, user, { calling_window: { days: ['mon', 'fri'], start: '22:00', end: '02:00', timezone: 'Europe/Paris' } });
    assert.equal(created.status, 'draft');
    assert.equal(created.concurrency, 2);
    assert.equal(created.max_attempts, 1);
    assert.deepEqual(created.stats, { total: 0, pending: 0, in_progress: 0, completed: 0, failed: 0, skipped: 0, canceled: 0 });
    const got = await t.request({ method: 'GET', url: `/v1/campaigns/${created.id}`, ...as(user) });
    assert.equal(got.json().name, 'November reminders');
    assert.equal(got.json().calling_window.end, '02:00');
    const list = await t.request({ method: 'GET', url: '/v1/campaigns?status=draft', ...as(user) });
    assert.deepEqual(list.json().data.map((c: { id: string }) => c.id), [created.id]);
    const patched = await t.request({ method: 'PATCH', url: `/v1/campaigns/${created.id}`, ...as(user), payload: { concurrency: 7, retry_delay_minutes: 0, calling_window: null } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().concurrency, 7);
    assert.equal(patched.json().retry_delay_minutes, 0);
    assert.equal(patched.json().calling_window, null);
    const removed = await t.request({ method: 'DELETE', url: `/v1/campaigns/${created.id}`, ...as(user) });
    assert.equal(removed.statusCode, 204);
    assert.equal((await t.request({ method: 'GET', url: `/v1/campaigns/${created.id}`, ...as(user) })).statusCode, 404);
  });

  it('a calling window without a time zone is in UTC, on create and on update', async () => {
    const user = await signUp(t);
    const created = await createCampaign(t, user, { calling_window: { days: ['mon'], start: '09:00', end: '17:00' } });
    assert.deepEqual(created.calling_window, { days: ['mon'], start: '09:00', end: '17:00', timezone: 'UTC' });
    const patched = await t.request({ method: 'PATCH', url: `/v1/campaigns/${created.id}`, ...as(user), payload: { calling_window: { days: ['tue'], start: '10:00', end: '11:00' } } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(patched.json().calling_window, { days: ['tue'], start: '10:00', end: '11:00', timezone: 'UTC' });
    const stored = await t.platform.db.selectFrom('campaigns').select('calling_window').where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal((stored.calling_window as { timezone: string }).timezone, 'UTC');
  });

  it('refuses bad settings with 422 naming the field', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ concurrency: 51 }, 'concurrency'],
      [{ agent_id: 'agent_00000000000000000000000000' }, 'agent_id'],
      [{ calling_window: { days: ['mon'], start: '09:00', end: '17:00', timezone: 'Mars/Olympus' } }, 'calling_window.timezone'],
      [{ calling_window: { days: ['someday'], start: '09:00', end: '17:00' } }, 'calling_window.days'],
      [{ calling_window: { days: ['mon'], start: '25:00', end: '17:00' } }, 'calling_window.start'],
      [{ default_country: 'XX' }, 'default_country'],
      [{ from_number: 'abc' }, 'from_number'],
    ];
    for (const [fields, path] of cases) {
      const res = await t.request({ method: 'POST', url: '/v1/campaigns', ...as(user), payload: { name: 'x', agent_id: agent.id, ...fields } });
      assert.equal(res.statusCode, 422, `${JSON.stringify(fields)}: ${res.body}`);
      assert.ok(res.json().errors.some((e: { path: string }) => e.path.startsWith(path)), res.body);
    }
  });

  it('follows draft → ready → running ⇄ paused → canceled; illegal moves are 409 invalid_state', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user);
    assert.equal((await action(t, user, campaign.id, 'start', 409)).code, 'invalid_state');
    assert.equal((await action(t, user, campaign.id, 'pause', 409)).code, 'invalid_state');
    await uploadCsv(t, user, campaign.id, 'phone\n+15550100200\n');
    assert.equal((await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}`, ...as(user) })).json().status, 'ready');
    const running = await action(t, user, campaign.id, 'start');
    assert.equal(running.status, 'running');
    assert.ok(running.started_at);
    assert.equal((await action(t, user, campaign.id, 'start', 409)).code, 'invalid_state');
    assert.equal((await uploadCsv(t, user, campaign.id, 'phone\n+15550100201\n', 409)).code, 'invalid_state');
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/campaigns/${campaign.id}`, ...as(user) })).statusCode, 409);
    assert.equal((await action(t, user, campaign.id, 'pause')).status, 'paused');
    assert.equal((await action(t, user, campaign.id, 'pause', 409)).code, 'invalid_state');
    assert.equal((await action(t, user, campaign.id, 'start')).status, 'running', 'start on a paused campaign resumes');
    const canceled = await action(t, user, campaign.id, 'cancel');
    assert.equal(canceled.status, 'canceled');
    assert.equal(canceled.stats.canceled, 1);
    assert.equal((await action(t, user, campaign.id, 'cancel', 409)).code, 'invalid_state');
    assert.equal((await action(t, user, campaign.id, 'start', 409)).code, 'invalid_state');
    const patched = await t.request({ method: 'PATCH', url: `/v1/campaigns/${campaign.id}`, ...as(user), payload: { name: 'again' } });
    assert.equal(patched.statusCode, 409);
    // A bad body is 422 whatever the state (docs/decisions.md, Campaigns).
    const bad = await t.request({ method: 'PATCH', url: `/v1/campaigns/${campaign.id}`, ...as(user), payload: { calling_window: { days: ['mon'], start: '09:00', end: '09:00', timezone: 'UTC' } } });
    assert.equal(bad.statusCode, 422, bad.body);
    assert.equal(bad.json().errors[0].path, 'calling_window.end');
  });

  it('start with an empty wallet is 402', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user);
    await uploadCsv(t, user, campaign.id, 'phone\n+15550100200\n');
    await t.platform.db.updateTable('wallets').set({ balance_micros: 0 }).where('workspace_id', '=', user.workspaceId).execute();
    assert.equal((await action(t, user, campaign.id, 'start', 402)).code, 'insufficient_balance');
  });
});

describe('campaigns: uploads', () => {
  it('reads an Excel export (BOM, `;`, CRLF, quoted fields, empty lines, 20 % invalid numbers) with the default country', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user, { default_country: 'FR' });
    const result = await uploadCsv(t, user, campaign.id, fixture('excel-export-semicolon.csv'));
    assert.equal(result.accepted, 6);
    assert.equal(result.duplicates, 1);
    assert.equal(result.skipped_dnc, 0);
    assert.deepEqual(result.rejected.map((r: { row: number }) => r.row), [6, 9, 13]);
    assert.match(result.rejected[0].reason, /not a possible phone number/);
    assert.match(result.rejected[2].reason, /time zone/);
    const contacts = (await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/contacts?limit=100`, ...as(user) })).json().data;
    assert.deepEqual(contacts.map((c: { phone: string }) => c.phone), ['+33612345678', '+33698765432', '+33611223344', '+33655443322', '+15550100300', '+33677889900']);
    assert.deepEqual(contacts[0].variables, { Name: 'Amélie Durand', Company: 'Durand; Fils & Cie' });
    assert.equal(contacts[0].timezone, 'Europe/Paris');
    assert.equal(contacts[0].row, 2);
    assert.equal(contacts[1].timezone, null);
    assert.equal(contacts[2].variables.Company, 'Martin "et associés"');
    assert.equal(contacts[3].variables.Company, 'Bernard, Lyon');
    assert.equal(contacts[0].status, 'pending');
    assert.equal(contacts[0].attempts, 0);
    const detail = await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/contacts/${contacts[0].id}`, ...as(user) });
    assert.equal(detail.statusCode, 200);
    assert.deepEqual(detail.json().attempt_history, []);
  });

  it('takes a multipart file, quoted commas and newlines, phone_number; a second upload appends and counts duplicates and DNC', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user);
    await t.request({ method: 'POST', url: '/v1/dnc', ...as(user), payload: { number: '+15550100404' } });
    const file = multipartForm([{ name: 'file', filename: 'contacts.csv', contentType: 'text/csv', data: fixture('quoted-commas.csv') }]);
    const res = await t.request({ method: 'POST', url: `/v1/campaigns/${campaign.id}/upload`, ...as(user), ...file });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { accepted: 3, rejected: [{ row: 7, reason: 'no phone number' }], duplicates: 0, skipped_dnc: 1 });
    const contacts = (await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/contacts`, ...as(user) })).json().data;
    assert.equal(contacts[0].variables.note, 'likes commas, a lot');
    assert.equal(contacts[1].variables.note, 'multi\nline note');
    assert.deepEqual(contacts.map((c: { row: number }) => c.row), [2, 3, 5], 'each row is the line it starts on, the multi-line one too');
    assert.equal(contacts[2].phone, '+15550100403');
    const again = await uploadCsv(t, user, campaign.id, 'to;first_name\n+15550100401;Ada\n+15550100499;Zoe\n');
    assert.deepEqual(again, { accepted: 1, rejected: [], duplicates: 1, skipped_dnc: 0 });
    const total = (await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}`, ...as(user) })).json().stats.total;
    assert.equal(total, 4);
    const pendingOnly = await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/contacts?status=completed`, ...as(user) });
    assert.deepEqual(pendingOnly.json().data, []);
  });

  it('refuses a file without a phone column (422) and one over 100,000 data rows whole (413)', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user);
    const noPhone = await uploadCsv(t, user, campaign.id, 'name,email\nAda,a@example.com\n', 422);
    assert.equal(noPhone.errors[0].path, 'file');
    const lines = ['phone'];
    for (let i = 0; i < 100_001; i++) lines.push(`+1555${String(1_000_000 + i)}`);
    const tooMany = await uploadCsv(t, user, campaign.id, `${lines.join('\n')}\n`, 413);
    assert.equal(tooMany.code, 'payload_too_large');
    const after = (await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}`, ...as(user) })).json();
    assert.equal(after.stats.total, 0, 'nothing of a refused upload is kept');
    assert.equal(after.status, 'draft');
  });

  it('refuses a body over 10 MiB with 413', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user);
    const big = Buffer.alloc(10 * 1024 * 1024 + 10, 'a');
    const res = await t.request({ method: 'POST', url: `/v1/campaigns/${campaign.id}/upload`, ...as(user), headers: { 'content-type': 'text/csv' }, payload: big });
    assert.equal(res.statusCode, 413, res.body);
  });
});

const withCampaign = async (app: typeof t, owner: Parameters<typeof createCampaign>[1]) => createCampaign(app, owner);
const withContacts = async (app: typeof t, owner: Parameters<typeof createCampaign>[1]) => {
  const campaign = await createCampaign(app, owner);
  await uploadCsv(app, owner, campaign.id, 'phone\n+15550100200\n');
  return campaign;
};

securitySuite('campaigns', async () => t, {
  'POST /v1/campaigns': { scope: 'write', prepare: async (app, owner) => ({ method: 'POST', url: '/v1/campaigns', payload: { name: 'x', agent_id: (await createCallAgent(app, owner)).id } }) },
  'GET /v1/campaigns': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/campaigns' }) },
  'GET /v1/campaigns/{id}': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/campaigns/${(await withCampaign(app, owner)).id}` }) },
  'PATCH /v1/campaigns/{id}': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'PATCH', url: `/v1/campaigns/${(await withCampaign(app, owner)).id}`, payload: { name: 'y' } }) },
  'DELETE /v1/campaigns/{id}': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'DELETE', url: `/v1/campaigns/${(await withCampaign(app, owner)).id}` }) },
  'POST /v1/campaigns/{id}/upload': {
    scope: 'write',
    ownedResource: true,
    prepare: async (app, owner) => ({ method: 'POST', url: `/v1/campaigns/${(await withCampaign(app, owner)).id}/upload`, headers: { 'content-type': 'text/csv' }, payload: 'phone\n+15550100200\n' }),
  },
  'GET /v1/campaigns/{id}/contacts': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/campaigns/${(await withContacts(app, owner)).id}/contacts` }) },
  'GET /v1/campaigns/{id}/contacts/{contact_id}': {
    scope: 'read-only',
    ownedResource: true,
    prepare: async (app, owner) => {
      const campaign = await withContacts(app, owner);
      const contact = (await app.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/contacts`, ...as(owner) })).json().data[0];
      return { method: 'GET', url: `/v1/campaigns/${campaign.id}/contacts/${contact.id}` };
    },
  },
  'POST /v1/campaigns/{id}/start': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'POST', url: `/v1/campaigns/${(await withContacts(app, owner)).id}/start` }) },
  'POST /v1/campaigns/{id}/pause': {
    scope: 'write',
    ownedResource: true,
    prepare: async (app, owner) => {
      const campaign = await withContacts(app, owner);
      await action(app, owner, campaign.id, 'start');
      return { method: 'POST', url: `/v1/campaigns/${campaign.id}/pause` };
    },
  },
  'POST /v1/campaigns/{id}/cancel': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'POST', url: `/v1/campaigns/${(await withContacts(app, owner)).id}/cancel` }) },
  'GET /v1/campaigns/{id}/results': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/campaigns/${(await withContacts(app, owner)).id}/results` }) },
  'GET /v1/campaigns/{id}/stats': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/campaigns/${(await withContacts(app, owner)).id}/stats` }) },
});
