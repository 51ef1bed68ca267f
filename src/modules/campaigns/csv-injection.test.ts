import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { as, createCallAgent, waitForEnd } from '../calls/test-helpers.ts';
import { action, createCampaign, uploadCsv } from './test-helpers.ts';

// CSV formula injection (OWASP) through both exports, over HTTP: the campaign results and the
// calls export carry text we did not write, from a contact upload (variables, a column name) and
// from what a caller said (extracted.*). Cells a spreadsheet would run as a formula come back with
// a leading `'`; plain numbers and E.164 numbers come back as they were. The rule itself is
// tested in src/platform/csv.test.ts.

const t = await buildTestApp({ env: { SANDBOX_SPEED: '100' } });

const SAID = "=cmd|' /C calc'!A0 about my booking";
const UPLOAD = ['phone,name,note,score,@cmd', `+15550100200,"=cmd|' /C calc'!A0",+SUM(1+1),-2,x`, '+15550100201,@evil,-1+2,+15551234567,=1+1', ''].join('\n');

describe('CSV exports neutralise formula cells', () => {
  it('campaign results and the calls export: uploaded and extracted formulas get a leading quote; numbers and phone numbers stay readable', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { max_duration_seconds: 10, first_message: 'Hi.', extraction_fields: [{ name: 'topic', type: 'string', description: 'what the caller asked about' }] });
    const campaign = await createCampaign(t, user, { agent_id: agent.id, concurrency: 2, simulation: { caller_script: [SAID, 'Goodbye!'] } });
    assert.equal((await uploadCsv(t, user, campaign.id, UPLOAD)).accepted, 2);
    await action(t, user, campaign.id, 'start');
    assert.equal(await t.modules.campaigns.dialer.runDueOnce(), 2);
    const calls = await t.platform.db.selectFrom('calls').select('id').where('campaign_id', '=', campaign.id).execute();
    for (const call of calls) {
      const ended = await waitForEnd(t, user, call.id);
      assert.equal(ended.extracted.topic, SAID, 'the caller steered the extraction');
    }

    const results = await t.request({ method: 'GET', url: `/v1/campaigns/${campaign.id}/results`, ...as(user) });
    assert.equal(results.statusCode, 200, results.body);
    const [header, ...rows] = parse(results.body) as string[][];
    assert.deepEqual(header, ['phone', 'status', 'attempts', 'call_id', 'duration_seconds', 'end_reason', 'ended_at', 'name', 'note', 'score', "'@cmd", 'extracted.topic']);
    const byPhone = new Map(rows.map((r) => [r[0], Object.fromEntries(header.map((h, i) => [h, r[i]]))]));
    const first = byPhone.get('+15550100200');
    const second = byPhone.get('+15550100201');
    assert.deepEqual([first?.name, first?.note, first?.score, first?.["'@cmd"], first?.['extracted.topic']], ["'=cmd|' /C calc'!A0", "'+SUM(1+1)", '-2', 'x', `'${SAID}`]);
    assert.deepEqual([second?.name, second?.note, second?.score, second?.["'@cmd"], second?.['extracted.topic']], ["'@evil", "'-1+2", '+15551234567', "'=1+1", `'${SAID}`]);

    const exported = await t.request({ method: 'GET', url: `/v1/calls/export?agent_id=${agent.id}`, ...as(user) });
    assert.equal(exported.statusCode, 200, exported.body);
    const callRows = parse(exported.body, { columns: true }) as Array<Record<string, string>>;
    assert.equal(callRows.length, 2);
    for (const row of callRows) {
      assert.equal(row['extracted.topic'], `'${SAID}`);
      assert.match(row.to, /^\+1555010020[01]$/, 'an E.164 number is not prefixed');
      assert.equal(row.from, '+15550100001');
      assert.match(row.duration_seconds, /^\d+$/);
    }
  });
});
