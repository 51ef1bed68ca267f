import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { type FormPart, multipartForm } from '../../../test/support/multipart.ts';
import { as } from '../calls/test-helpers.ts';
import { action, createCampaign, uploadCsv } from './test-helpers.ts';

// The campaigns routes' own rules (routes.ts) and the module's wiring (module.ts) over HTTP: what
// the upload takes as its file and refuses, the results CSV as a download, the dialer among the
// app's jobs and its pass waking the calls worker. A quick file for mutation testing; the
// behaviour behind each route is in campaigns.test.ts and the rule files.

const t = await buildTestApp();

const notAFile = { code: 'validation_failed', detail: 'file: must be a CSV file part (multipart) or a text/csv body' };
const csvFile = (name: string, filename: string, data: string): FormPart => ({ name, filename, contentType: 'text/csv', data });

async function upload(user: TestUser, campaignId: string, request: { headers: Record<string, string>; payload: Buffer | string }) {
  const res = await t.request({ method: 'POST', url: `/v1/campaigns/${campaignId}/upload`, ...as(user), ...request });
  return { status: res.statusCode, body: res.json() as { code?: string; detail?: string; accepted?: number } };
}

describe('upload: what is a file', () => {
  it('a JSON body, or a form whose `file` is a plain field, is 422 naming the file; nothing is added', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user);
    for (const request of [
      { headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ file: 'phone\n+15550100401\n' }) },
      multipartForm([{ name: 'file', value: 'phone\n+15550100401\n' }]),
    ]) {
      const { status, body } = await upload(user, campaign.id, request);
      assert.deepEqual([status, body.code, body.detail], [422, notAFile.code, notAFile.detail], request.headers['content-type']);
    }
    const contacts = (await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/contacts`, ...as(user) })).json().data;
    assert.deepEqual(contacts, []);
  });

  it('a form holds one file at most: a second file part is 413, nothing is added; one file part is read', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user);
    const two = multipartForm([csvFile('file', 'a.csv', 'phone\n+15550100401\n'), csvFile('more', 'b.csv', 'phone\n+15550100402\n')]);
    assert.equal((await upload(user, campaign.id, two)).status, 413);
    const one = await upload(user, campaign.id, multipartForm([csvFile('file', 'a.csv', 'phone\n+15550100401\n')]));
    assert.deepEqual([one.status, one.body.accepted], [200, 1]);
  });
});

describe('results', () => {
  it('a CSV download named after the campaign: text/csv in UTF-8, Content-Disposition attachment', async () => {
    const user = await signUp(t);
    const campaign = await createCampaign(t, user);
    await uploadCsv(t, user, campaign.id, 'phone\n+15550100401\n');
    const res = await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/results`, ...as(user) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(res.headers['content-disposition'], `attachment; filename="${campaign.id}-results.csv"`);
    assert.match(res.body, /^phone,/);
  });
});

describe('the module', () => {
  it("the dialer is the app's job named campaigns, started after the calls worker it feeds", () => {
    const names = t.jobs.map((job) => job.name);
    const dialer = t.jobs.find((job) => job.name === 'campaigns');
    assert.equal(dialer?.start, t.modules.campaigns.dialer.start);
    assert.equal(dialer?.stop, t.modules.campaigns.dialer.stop);
    assert.ok(names.indexOf('calls') < names.indexOf('campaigns'), names.join(', '));
  });

  it('a pass that queues calls wakes the calls worker at once (not at its next poll)', async () => {
    const user = await signUp(t);
    await t.platform.db.updateTable('wallets').set({ balance_micros: 1_000_000_000 }).where('workspace_id', '=', user.workspaceId).execute();
    const campaign = await createCampaign(t, user);
    await uploadCsv(t, user, campaign.id, 'phone\n+15550100401\n+15550100402\n');
    await action(t, user, campaign.id, 'start');
    const { worker } = t.modules.calls;
    const nudge = worker.nudge;
    let nudges = 0;
    worker.nudge = () => {
      nudges += 1;
    };
    try {
      assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 2);
      assert.equal(nudges, 1);
    } finally {
      worker.nudge = nudge;
    }
  });
});
