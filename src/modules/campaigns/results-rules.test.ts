import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Insertable, sql } from 'kysely';
import { insertCampaign, seedWorkspace, T0 } from '../../../test/support/campaign-rows.ts';
import { insertResultCall, insertResultContacts } from '../../../test/support/campaign-results-rows.ts';
import { testDatabase } from '../../../test/support/database.ts';
import { until } from '../../../test/support/processes.ts';
import { newId } from '../../platform/ids.ts';
import { resultsCsv, statsOfCampaign } from './results.ts';
import type { CampaignsTable } from './tables.ts';

// The results CSV and the stats of a campaign (results.ts) against the real database, rows written
// directly: the columns and their order, one row per contact by id, the call of its latest
// attempt (ended or not), the extraction columns (the agent's fields, then the other keys the
// campaign's calls extracted), formula cells neutralised, pages of 1,000; the stats' counts,
// calls, outcomes, seconds and cost. campaigns.test.ts and csv-injection.test.ts go through HTTP.

const database = await testDatabase();
const db = database.db;
const FIXED = 'phone,status,attempts,call_id,duration_seconds,end_reason,ended_at';
const P = (n: number) => `+1555555${String(n).padStart(4, '0')}`;
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

async function campaignWith(fields: Partial<Insertable<CampaignsTable>> = {}, extractionFields: string[] = []) {
  const ws = await seedWorkspace(db);
  const fieldsJson = JSON.stringify(extractionFields.map((name) => ({ name, type: 'string', description: name })));
  await sql`update agents set extraction_fields = ${fieldsJson}::jsonb where id = ${ws.agentId}`.execute(db);
  return insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId, ...fields });
}

async function textOf(stream: AsyncIterable<Buffer | string>) {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

/** Contact ids in increasing order (monotonic ULIDs): the CSV's row order. */
const sortedIds = (n: number) => Array.from({ length: n }, () => newId('cnt')).sort();

describe('resultsCsv', () => {
  it('the whole file: fixed columns, variables, extraction columns; one row per contact by id; the latest call', async () => {
    const campaign = await campaignWith({ variable_names: JSON.stringify(['name', '@note']) }, ['topic', 'callback', 'missing']);
    const other = await campaignWith({}, []);
    await insertResultCall(db, other, { status: 'completed', extracted: { secret: 1 } });
    await insertResultCall(db, campaign, { status: 'completed', extracted: ['not', 'an', 'object'] });
    await insertResultCall(db, campaign, { status: 'failed', extracted: 'text' });
    const ended = await insertResultCall(db, campaign, {
      status: 'completed',
      billed_seconds: 42,
      end_reason: 'caller_goodbye',
      ended_at: at(90),
      extracted: { topic: '=cmd|calc', callback: { when: 'mon' }, budget: 12.5 },
    });
    const live = await insertResultCall(db, campaign, { status: 'in_progress', billed_seconds: 5, extracted: { topic: null, callback: false, budget: 0 } });
    const unbilled = await insertResultCall(db, campaign, { status: 'no_answer', end_reason: 'no_answer', ended_at: at(30) });
    const [a, b, c, d] = sortedIds(4);
    // Inserted highest id first, so the table's own order is not the id order.
    await insertResultContacts(db, campaign, [
      { id: d, phone: P(4), status: 'failed', attempts: 1, call_id: unbilled, variables: { name: 'Dan' } },
      { id: c, phone: P(3), variables: {} },
      { id: b, phone: P(2), status: 'calling', attempts: 1, call_id: live, variables: { name: 'Bob', '@note': '-1+2' } },
      { id: a, phone: P(1), status: 'completed', attempts: 2, call_id: ended, variables: { name: 'Ann, Jr.', '@note': '@home' } },
    ]);
    await insertResultContacts(db, other, [{ phone: P(9) }]);
    const sibling = await insertCampaign(db, { workspace_id: campaign.workspace_id, agent_id: campaign.agent_id });
    await insertResultCall(db, sibling, { status: 'completed', extracted: { sibling_key: 1 } });
    await insertResultContacts(db, sibling, [{ phone: P(8) }]);
    const expected = [
      `${FIXED},name,'@note,extracted.topic,extracted.callback,extracted.missing,extracted.budget`,
      `${P(1)},completed,2,${ended},42,caller_goodbye,2026-11-23T10:01:30.000Z,"Ann, Jr.",'@home,'=cmd|calc,"{""when"":""mon""}",,12.5`,
      `${P(2)},calling,1,${live},,,,Bob,'-1+2,,false,,0`,
      `${P(3)},pending,0,,,,,,,,,,`,
      `${P(4)},failed,1,${unbilled},0,no_answer,2026-11-23T10:00:30.000Z,Dan,,,,,`,
      '',
    ];
    assert.ok(a < b && b < c && c < d);
    assert.equal(await textOf(await resultsCsv(db, campaign)), expected.join('\n'));
  });

  it('a campaign without variables, extraction fields or contacts: the header alone', async () => {
    const campaign = await campaignWith({ variable_names: JSON.stringify([]) });
    assert.equal(await textOf(await resultsCsv(db, campaign)), `${FIXED}\n`);
  });

  it('an extracted key that is one of the agent fields is not repeated; other keys follow the fields', async () => {
    const campaign = await campaignWith({ variable_names: JSON.stringify([]) }, ['b_field', 'a_field']);
    const call = await insertResultCall(db, campaign, { status: 'completed', ended_at: at(1), extracted: { a_field: 'x', extra: 'y' } });
    await insertResultCall(db, campaign, { status: 'completed', extracted: { b_field: 'z', extra: 'w' } });
    await insertResultContacts(db, campaign, [{ phone: P(1), call_id: call }]);
    assert.equal(
      await textOf(await resultsCsv(db, campaign)),
      `${FIXED},extracted.b_field,extracted.a_field,extracted.extra\n${P(1)},pending,0,${call},0,,2026-11-23T10:00:01.000Z,,x,y\n`,
    );
  });

  it('the other extracted keys follow in name order, whatever the calls and the plan (a hash aggregate keeps none)', async () => {
    const campaign = await campaignWith({ variable_names: JSON.stringify([]) });
    const call = await insertResultCall(db, campaign, { status: 'completed', ended_at: at(1), extracted: { zeta: 1, alpha: 2, mid: 3 } });
    await insertResultCall(db, campaign, { status: 'completed', extracted: { beta: 4 } });
    await insertResultContacts(db, campaign, [{ phone: P(1), call_id: call }]);
    const header = (await textOf(await resultsCsv(db, campaign))).split('\n')[0];
    assert.equal(header, `${FIXED},extracted.alpha,extracted.beta,extracted.mid,extracted.zeta`);
  });

  it('waits for a reader that does not read: what it holds stays near the stream\'s mark, not a page of rows', async () => {
    const campaign = await campaignWith({ variable_names: JSON.stringify(['note']) });
    // A page of 1,000 rows of some 230 bytes each: 230 kB written at once without backpressure.
    await insertResultContacts(db, campaign, Array.from({ length: 1000 }, (_, i) => ({ phone: P(i), variables: { note: 'n'.repeat(200) } })));
    const csv = await resultsCsv(db, campaign);
    await until('the first rows written', async () => (csv.readableLength > 0 ? true : undefined));
    // The page's rows are written in one turn of the loop, or until write() asks to wait.
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The rows written and not yet turned into text are counted as rows (the writable side takes objects).
    assert.ok(csv.readableLength <= csv.readableHighWaterMark + 1024, `${csv.readableLength} bytes of text held`);
    assert.ok(csv.writableLength <= csv.writableHighWaterMark, `${csv.writableLength} rows held`);
    csv.destroy();
  });

  it('reads every contact over pages of 1,000, in id order', { timeout: 60_000 }, async () => {
    const campaign = await campaignWith({ variable_names: JSON.stringify(['name']) });
    const contacts = Array.from({ length: 2001 }, (_, i) => ({ id: `cnt_${String(i).padStart(5, '0')}`, phone: P(i), variables: { name: `n${i}` } }));
    await insertResultContacts(db, campaign, [...contacts].reverse());
    const lines = (await textOf(await resultsCsv(db, campaign))).split('\n');
    assert.equal(lines.length, 2003);
    assert.equal(lines[0], `${FIXED},name`);
    assert.deepEqual(lines.slice(1, -1), contacts.map((k, i) => `${k.phone},pending,0,,,,,n${i}`));
    assert.equal(lines.at(-1), '');
  });

  it('a row it cannot write fails the stream (no hang, no partial success)', { timeout: 30_000 }, async () => {
    const campaign = await campaignWith({ variable_names: JSON.stringify(['name']) });
    await insertResultContacts(db, campaign, [{ phone: P(1), variables: null }]);
    await assert.rejects(textOf(await resultsCsv(db, campaign)), TypeError);
  });
});

describe('statsOfCampaign', () => {
  it('contact counts, calls placed and live, outcomes, seconds and cost of the campaign alone', async () => {
    const campaign = await campaignWith({ status: 'completed', started_at: at(0), completed_at: at(3600) });
    const contacts = (['pending', 'calling', 'calling', 'completed', 'completed', 'completed', 'failed', 'skipped', 'canceled', 'canceled'] as const).map((status, i) => ({
      phone: P(i),
      status,
    }));
    await insertResultContacts(db, campaign, contacts);
    const calls: Array<[Parameters<typeof insertResultCall>[2]['status'], number, number]> = [
      ['queued', 1, 1],
      ['ringing', 2, 2],
      ['in_progress', 4, 4],
      ['in_progress', 8, 8],
      ['completed', 30, 100_000],
      ['completed', 45, 200_000],
      ['transferred', 60, 300_000],
      ['voicemail', 10, 1_000],
      ['failed', 0, 0],
      ['busy', 0, 0],
      ['no_answer', 0, 0],
      ['canceled', 0, 0],
      ['canceled', 100, 234_567],
    ];
    for (const [status, seconds, cost] of calls) await insertResultCall(db, campaign, { status, billed_seconds: seconds, cost_micros: cost });
    const sibling = await insertCampaign(db, { workspace_id: campaign.workspace_id, agent_id: campaign.agent_id });
    await insertResultCall(db, sibling, { status: 'completed', billed_seconds: 1000, cost_micros: 1_000_000 });
    await insertResultContacts(db, sibling, [{ phone: P(0), status: 'completed' }]);
    const other = await campaignWith();
    await insertResultCall(db, campaign, { status: 'completed', billed_seconds: 1000, cost_micros: 1_000_000, workspace_id: other.workspace_id, agent_id: other.agent_id });
    assert.deepEqual(await statsOfCampaign(db, campaign), {
      campaign_id: campaign.id,
      status: 'completed',
      total: 10,
      pending: 1,
      in_progress: 2,
      completed: 3,
      failed: 1,
      skipped: 1,
      canceled: 2,
      calls: 11,
      live_calls: 3,
      outcomes: { completed: 2, transferred: 1, voicemail: 1, failed: 1, busy: 1, no_answer: 1, canceled: 2 },
      duration_seconds: 260,
      cost_usd: 0.835_582,
      started_at: '2026-11-23T10:00:00.000Z',
      completed_at: '2026-11-23T11:00:00.000Z',
    });
  });

  it('a campaign with neither contacts nor calls, never started', async () => {
    const campaign = await campaignWith({ status: 'draft', started_at: null });
    assert.deepEqual(await statsOfCampaign(db, campaign), {
      campaign_id: campaign.id,
      status: 'draft',
      total: 0,
      pending: 0,
      in_progress: 0,
      completed: 0,
      failed: 0,
      skipped: 0,
      canceled: 0,
      calls: 0,
      live_calls: 0,
      outcomes: {},
      duration_seconds: 0,
      cost_usd: 0,
      started_at: null,
      completed_at: null,
    });
  });
});
