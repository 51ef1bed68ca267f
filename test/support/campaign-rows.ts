import { type Insertable, sql } from 'kysely';
import type { CallStatus } from '../../src/modules/calls/tables.ts';
import type { CampaignRow, ContactRow } from '../../src/modules/campaigns/repo.ts';
import type { CampaignsTable, ContactStatus } from '../../src/modules/campaigns/tables.ts';
import type { Executor } from '../../src/platform/db/schema.ts';
import { newId } from '../../src/platform/ids.ts';
import { insertWorkspace } from './rows.ts';

// Rows of the campaigns tables written straight into the database, for the campaigns' rule tests
// (src/modules/campaigns/*-rules.test.ts): a workspace with an agent and a wallet, a campaign,
// its contacts and calls, without the HTTP API.

export const T0 = new Date('2026-11-23T10:00:00.000Z');

/** A workspace of its own with an agent and a wallet holding `balanceMicros`. */
export async function seedWorkspace(db: Executor, balanceMicros = 1_000_000_000) {
  const workspaceId = await insertWorkspace(db, T0);
  const agentId = newId('agent');
  await sql`insert into agents (id, workspace_id, name, prompt, language, voice, llm, max_duration_seconds, voicemail, webhook_secret, created_at, updated_at)
    values (${agentId}, ${workspaceId}, 'Agent', 'Be brief.', 'en', 'builtin-ava', '{"provider":"builtin","model":"builtin","temperature":0.7}'::jsonb, 60, '{}'::jsonb, 'secret', ${T0}, ${T0})`.execute(db);
  await sql`insert into wallets (workspace_id, balance_micros, created_at, updated_at) values (${workspaceId}, ${balanceMicros}, ${T0}, ${T0})
    on conflict (workspace_id) do update set balance_micros = excluded.balance_micros`.execute(db);
  return { workspaceId, agentId };
}

export async function insertCampaign(db: Executor, fields: Partial<Insertable<CampaignsTable>> & { workspace_id: string; agent_id: string }): Promise<CampaignRow> {
  const row = {
    id: newId('cmp'),
    name: 'November reminders',
    from_number: null,
    status: 'running' as const,
    concurrency: 5,
    max_attempts: 2,
    retry_delay_minutes: 30,
    calling_window: null,
    default_country: null,
    simulation: null,
    variable_names: JSON.stringify(['name']),
    pause_reason: null,
    started_at: T0,
    completed_at: null,
    canceled_at: null,
    created_at: T0,
    updated_at: T0,
    ...fields,
  };
  return (await db.insertInto('campaigns').values(row).returningAll().executeTakeFirstOrThrow()) as CampaignRow;
}

let phoneSeq = 0;

export async function insertContact(
  db: Executor,
  campaign: CampaignRow,
  fields: { id?: string; status?: ContactStatus; timezone?: string | null; next_attempt_at?: Date | null; attempts?: number; phone?: string; call_id?: string | null } = {},
): Promise<ContactRow> {
  phoneSeq += 1;
  const row = {
    id: fields.id ?? newId('cnt'),
    campaign_id: campaign.id,
    workspace_id: campaign.workspace_id,
    row_number: phoneSeq + 1,
    phone: fields.phone ?? `+1555${String(3000000 + phoneSeq).padStart(7, '0')}`,
    variables: JSON.stringify({ name: `Contact ${phoneSeq}` }),
    timezone: fields.timezone ?? null,
    status: fields.status ?? ('pending' as const),
    attempts: fields.attempts ?? 0,
    next_attempt_at: fields.next_attempt_at ?? null,
    call_id: fields.call_id ?? null,
    created_at: T0,
    updated_at: T0,
  };
  return (await db.insertInto('campaign_contacts').values(row).returningAll().executeTakeFirstOrThrow()) as ContactRow;
}

/** A call of the campaign in `status` (counted by the dialer when queued, ringing or in progress). */
export async function insertCall(db: Executor, campaign: CampaignRow, status: CallStatus, campaignId: string | null = campaign.id) {
  const id = newId('call');
  await db
    .insertInto('calls')
    .values({ id, workspace_id: campaign.workspace_id, agent_id: campaign.agent_id, direction: 'outbound', status, provider: 'sandbox', campaign_id: campaignId, created_at: T0, updated_at: T0 } as never)
    .execute();
  return id;
}

export async function contactOf(db: Executor, id: string) {
  return db.selectFrom('campaign_contacts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** A tenant webhook endpoint of the workspace subscribed to `events`, so events of those types are written to the outbox. */
export async function insertTenantEndpoint(db: Executor, workspaceId: string, events: string[]) {
  await db
    .insertInto('webhook_endpoints')
    .values({ workspace_id: workspaceId, url: 'https://example.test/hook', secret: 's', previous_secret: null, previous_secret_expires_at: null, events: JSON.stringify(events), created_at: T0, updated_at: T0 })
    .execute();
}

/** An outbox event's payload: a JSON string on PGlite's text reads, an object on PostgreSQL's jsonb. */
export function payloadOf(row: { payload: unknown }): { data: Record<string, unknown> } {
  return (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as { data: Record<string, unknown> };
}

/** The `data` of each outbox event of this type in the workspace, oldest first. */
export async function eventDataOf(db: Executor, workspaceId: string, type: string) {
  const rows = await db.selectFrom('webhook_events').select('payload').where('workspace_id', '=', workspaceId).where('type', '=', type).orderBy('id').execute();
  return rows.map((row) => payloadOf(row).data);
}
