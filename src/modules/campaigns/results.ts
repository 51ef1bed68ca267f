import { sql } from 'kysely';
import { csvStream } from '../../platform/csv.ts';
import type { Database } from '../../platform/db/schema.ts';
import { microsToUsd } from '../../platform/money.ts';
import type { CampaignRow } from './repo.ts';
import { createCampaignsRepo } from './repo.ts';
import { statsOf } from './present.ts';

// The results CSV and the stats of a campaign. The CSV is streamed through csvStream (formula
// cells neutralised, platform/csv.ts), one row per contact (file order), read in pages of 1,000
// joined with the call of its latest attempt:
// phone, status, attempts, call_id, duration_seconds, end_reason, ended_at, each variable, each
// `extracted.*` (the agent's extraction fields, then any other key a call extracted).

const PAGE = 1000;
const cell = (value: unknown) => (value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));

interface ResultRow {
  id: string;
  phone: string;
  status: string;
  attempts: number;
  call_id: string | null;
  variables: Record<string, string>;
  billed_seconds: number | null;
  end_reason: string | null;
  ended_at: Date | string | null;
  extracted: Record<string, unknown> | null;
}

export async function resultsCsv(db: Database, campaign: CampaignRow) {
  const agent = await db.selectFrom('agents').select('extraction_fields').where('id', '=', campaign.agent_id).executeTakeFirst();
  const fields = ((agent?.extraction_fields ?? []) as Array<{ name: string }>).map((f) => f.name);
  const extra = await sql<{ key: string }>`
    select distinct jsonb_object_keys(c.extracted) as key from calls c where c.campaign_id = ${campaign.id} and jsonb_typeof(c.extracted) = 'object' order by key`.execute(db);
  for (const { key } of extra.rows) if (!fields.includes(key)) fields.push(key);
  const variables = campaign.variable_names as string[];
  const csv = csvStream(['phone', 'status', 'attempts', 'call_id', 'duration_seconds', 'end_reason', 'ended_at', ...variables, ...fields.map((f) => `extracted.${f}`)]);
  (async () => {
    let after = '';
    for (;;) {
      const rows = await sql<ResultRow>`
        select k.id, k.phone, k.status, k.attempts, k.call_id, k.variables, c.billed_seconds, c.end_reason, c.ended_at, c.extracted
        from campaign_contacts k left join calls c on c.id = k.call_id
        where k.campaign_id = ${campaign.id} and k.id > ${after}
        order by k.id limit ${PAGE}`.execute(db);
      for (const row of rows.rows) {
        const extracted = row.extracted ?? {};
        const ok = csv.write([
          row.phone,
          row.status,
          row.attempts,
          row.call_id ?? '',
          row.ended_at ? (row.billed_seconds ?? 0) : '',
          row.end_reason ?? '',
          row.ended_at ? new Date(row.ended_at).toISOString() : '',
          ...variables.map((v) => row.variables[v] ?? ''),
          ...fields.map((f) => cell(extracted[f])),
        ]);
        if (!ok) await new Promise((resolve) => csv.once('drain', resolve));
      }
      if (rows.rows.length < PAGE) break;
      after = rows.rows[rows.rows.length - 1].id;
    }
    csv.end();
  })().catch((err) => csv.destroy(err));
  return csv;
}

export async function statsOfCampaign(db: Database, campaign: CampaignRow) {
  const repo = createCampaignsRepo();
  const counts = (await repo.counts(db, [campaign.id])).get(campaign.id);
  const calls = await db
    .selectFrom('calls')
    .select(['status', (eb) => eb.fn.countAll<string>().as('n'), (eb) => eb.fn.sum<string>('billed_seconds').as('seconds'), (eb) => eb.fn.sum<string>('cost_micros').as('cost')])
    .where('workspace_id', '=', campaign.workspace_id)
    .where('campaign_id', '=', campaign.id)
    .groupBy('status')
    .execute();
  const outcomes: Record<string, number> = {};
  let placed = 0;
  let live = 0;
  let seconds = 0;
  let cost = 0;
  for (const row of calls) {
    const n = Number(row.n);
    if (row.status !== 'canceled') placed += n;
    if (row.status === 'ringing' || row.status === 'in_progress') live += n;
    else if (row.status !== 'queued') outcomes[row.status] = n;
    seconds += Number(row.seconds ?? 0);
    cost += Number(row.cost ?? 0);
  }
  return {
    campaign_id: campaign.id,
    status: campaign.status,
    ...statsOf(counts ?? { total: 0, pending: 0, calling: 0, completed: 0, failed: 0, skipped: 0, canceled: 0 }),
    calls: placed,
    live_calls: live,
    outcomes,
    duration_seconds: seconds,
    cost_usd: microsToUsd(cost),
    started_at: campaign.started_at ? new Date(campaign.started_at).toISOString() : null,
    completed_at: campaign.completed_at ? new Date(campaign.completed_at).toISOString() : null,
  };
}
