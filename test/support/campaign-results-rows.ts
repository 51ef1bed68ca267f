import { sql } from 'kysely';
import type { CallStatus, EndReason } from '../../src/modules/calls/tables.ts';
import type { CampaignRow } from '../../src/modules/campaigns/repo.ts';
import type { ContactStatus } from '../../src/modules/campaigns/tables.ts';
import type { Executor } from '../../src/platform/db/schema.ts';
import { newId } from '../../src/platform/ids.ts';
import { T0 } from './campaign-rows.ts';

// Rows for the results CSV and the stats (src/modules/campaigns/results-rules.test.ts): calls with
// their outcome (billing, end, extraction) and contacts with chosen ids and variables, many at once.

export interface ResultCall {
  status: CallStatus;
  billed_seconds?: number;
  cost_micros?: number;
  end_reason?: EndReason | null;
  ended_at?: Date | null;
  /** Any JSON, an array or a string included (stored as jsonb). */
  extracted?: unknown;
  workspace_id?: string;
  agent_id?: string;
}

/** A call of the campaign with its outcome; answers its id. */
export async function insertResultCall(db: Executor, campaign: CampaignRow, call: ResultCall): Promise<string> {
  const id = newId('call');
  await sql`insert into calls (id, workspace_id, agent_id, direction, status, provider, campaign_id, billed_seconds, cost_micros, end_reason, ended_at, extracted, created_at, updated_at)
    values (${id}, ${call.workspace_id ?? campaign.workspace_id}, ${call.agent_id ?? campaign.agent_id}, 'outbound', ${call.status}, 'sandbox', ${campaign.id},
      ${call.billed_seconds ?? 0}, ${call.cost_micros ?? 0}, ${call.end_reason ?? null}, ${call.ended_at ?? null}, ${JSON.stringify(call.extracted ?? {})}::jsonb, ${T0}, ${T0})`.execute(db);
  return id;
}

export interface ResultContact {
  id?: string;
  phone: string;
  status?: ContactStatus;
  attempts?: number;
  call_id?: string | null;
  /** Any JSON (stored as jsonb). */
  variables?: unknown;
}

/** Contacts of the campaign in one statement; answers their ids in the order given. */
export async function insertResultContacts(db: Executor, campaign: CampaignRow, contacts: ResultContact[]): Promise<string[]> {
  const rows = contacts.map((c, i) => ({
    id: c.id ?? newId('cnt'),
    campaign_id: campaign.id,
    workspace_id: campaign.workspace_id,
    row_number: i + 2,
    phone: c.phone,
    variables: JSON.stringify('variables' in c ? c.variables : {}),
    timezone: null,
    status: c.status ?? ('pending' as const),
    attempts: c.attempts ?? 0,
    next_attempt_at: null,
    call_id: c.call_id ?? null,
    created_at: T0,
    updated_at: T0,
  }));
  for (let at = 0; at < rows.length; at += 500) await db.insertInto('campaign_contacts').values(rows.slice(at, at + 500)).execute();
  return rows.map((r) => r.id);
}
