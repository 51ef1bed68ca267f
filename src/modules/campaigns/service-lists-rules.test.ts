import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { insertCampaign, insertContact } from '../../../test/support/campaign-rows.ts';
import { campaignServiceRig, refusal } from '../../../test/support/campaign-service-rig.ts';
import { idsOfPages } from '../../../test/support/paging.ts';
import { newId } from '../../platform/ids.ts';
import { decodeCursor, type Page, type PageRequest } from '../../platform/pagination.ts';
import { createCampaignsRepo } from './repo.ts';
import type { ContactStatus } from './tables.ts';

// The campaigns service's lists (service.ts, repo.ts) called directly: pages of campaigns and of
// contacts from cursor to cursor, each campaign's contacts counted in the list, a large upload
// inserted in batches, and the repo's answers to an empty batch. A fast file for mutation testing
// (service-rules.test.ts holds the state machine and the writes).

const { db, service, setup, rowOf } = await campaignServiceRig();
const repo = createCampaignsRepo();

/** Each page's ids, reading `limit` at a time through the service, each page from the last one's cursor. */
const idsByPage = (read: (page: PageRequest) => Promise<Page<{ id: string }>>, limit: number) =>
  idsOfPages((cursor) => read({ limit, after: cursor === null ? undefined : decodeCursor(cursor) }));

describe('list', () => {
  it('pages of `limit`, newest first, each from the last one cursor; the status filter pages too', async () => {
    const { ctx, workspaceId, agentId, campaign: first } = await setup({ status: 'paused' });
    const more = [];
    for (const status of ['running', 'paused', 'paused', 'draft'] as const) more.push(await insertCampaign(db, { workspace_id: workspaceId, agent_id: agentId, status }));
    const [c2, c3, c4, c5] = more.map((c) => c.id);
    assert.deepEqual(await idsByPage((page) => service.list(ctx, page), 2), [[c5, c4], [c3, c2], [first.id]]);
    assert.deepEqual(await idsByPage((page) => service.list(ctx, page), 5), [[c5, c4, c3, c2, first.id]]);
    assert.deepEqual(await idsByPage((page) => service.list(ctx, page, 'paused'), 2), [[c4, c3], [first.id]]);
  });

  it("each campaign with its own contacts counted by status; none is all zeros", async () => {
    const { ctx, workspaceId, agentId, campaign } = await setup({ status: 'running' });
    const empty = await insertCampaign(db, { workspace_id: workspaceId, agent_id: agentId, status: 'draft' });
    for (const status of ['pending', 'pending', 'calling', 'completed', 'failed', 'skipped', 'canceled'] as ContactStatus[]) await insertContact(db, campaign, { status });
    const listed = (await service.list(ctx, { limit: 10 })).data;
    assert.deepEqual(
      listed.map((c) => [c.id, c.stats]),
      [
        [empty.id, { total: 0, pending: 0, in_progress: 0, completed: 0, failed: 0, skipped: 0, canceled: 0 }],
        [campaign.id, { total: 7, pending: 2, in_progress: 1, completed: 1, failed: 1, skipped: 1, canceled: 1 }],
      ],
    );
  });
});

describe('contacts', () => {
  it('pages of `limit` in upload order (oldest first), each from the last one cursor; the status filter pages too', async () => {
    const { ctx, campaign } = await setup({ status: 'running' });
    const contacts = [];
    for (const status of ['pending', 'completed', 'pending', 'pending', 'failed'] as ContactStatus[]) contacts.push((await insertContact(db, campaign, { status })).id);
    const [k1, k2, k3, k4, k5] = contacts;
    assert.deepEqual(await idsByPage((page) => service.contacts(ctx, campaign.id, page), 2), [[k1, k2], [k3, k4], [k5]]);
    assert.deepEqual(await idsByPage((page) => service.contacts(ctx, campaign.id, page, 'pending'), 2), [[k1, k3], [k4]]);
  });
});

describe('update', () => {
  it("another workspace's campaign, or none, is 404 campaign not found, untouched", async () => {
    const { campaign } = await setup({ status: 'paused' });
    const stranger = await setup();
    const before = await rowOf(campaign.id);
    for (const id of [campaign.id, newId('cmp')]) assert.deepEqual(await refusal(service.update(stranger.ctx, id, { name: 'N' })), { status: 404, code: 'not_found', detail: 'campaign not found' });
    assert.deepEqual(await rowOf(campaign.id), before);
  });
});

describe('upload in batches', () => {
  it('7,000 contacts (70,000 values, more than one statement can bind) all accepted', async () => {
    const { ctx, campaign } = await setup({ status: 'draft' });
    const lines = Array.from({ length: 7000 }, (_, i) => `+1555${String(2_000_000 + i).padStart(7, '0')},Contact ${i}`);
    const result = await service.upload(ctx, campaign.id, new TextEncoder().encode(`phone,name\n${lines.join('\n')}\n`));
    assert.deepEqual({ ...result, rejected: result.rejected.length }, { accepted: 7000, rejected: 0, duplicates: 0, skipped_dnc: 0 });
    const stored = await db.selectFrom('campaign_contacts').select((eb) => eb.fn.countAll<string>().as('n')).where('campaign_id', '=', campaign.id).executeTakeFirstOrThrow();
    assert.equal(Number(stored.n), 7000);
  });

  it('the repo: no numbers to look up and no contacts to insert are answered at once (an empty IN or VALUES is no statement)', async () => {
    const { workspaceId } = await setup();
    assert.deepEqual(await repo.doNotCall(db, workspaceId, []), new Set());
    assert.equal(await repo.insertContacts(db, []), 0);
  });
});
