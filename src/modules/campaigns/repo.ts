import { type Selectable, sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { CampaignAttemptsTable, CampaignContactsTable, CampaignStatus, CampaignsTable, ContactStatus } from './tables.ts';

// Queries of campaigns, their contacts and attempts. Every read takes the workspace.

export type CampaignRow = Selectable<CampaignsTable>;
export type ContactRow = Selectable<CampaignContactsTable>;
export type AttemptRow = Selectable<CampaignAttemptsTable>;
export type ContactCounts = Record<ContactStatus, number> & { total: number };

const EMPTY_COUNTS = (): ContactCounts => ({ total: 0, pending: 0, calling: 0, completed: 0, failed: 0, skipped: 0, canceled: 0 });

export function createCampaignsRepo() {
  return {
    find(db: Executor, workspaceId: string, id: string) {
      return db.selectFrom('campaigns').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },
    /** The campaign row locked for a state change (waits for a dialer holding it). */
    lock(db: Executor, workspaceId: string, id: string) {
      return db.selectFrom('campaigns').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).forUpdate().executeTakeFirst();
    },
    list(db: Executor, workspaceId: string, page: PageRequest, status?: CampaignStatus) {
      let query = db.selectFrom('campaigns').selectAll().where('workspace_id', '=', workspaceId);
      if (status) query = query.where('status', '=', status);
      if (page.after) query = query.where('id', '<', page.after);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },
    /** Contacts per status of each campaign. */
    async counts(db: Executor, campaignIds: string[]): Promise<Map<string, ContactCounts>> {
      const result = new Map<string, ContactCounts>(campaignIds.map((id) => [id, EMPTY_COUNTS()]));
      if (campaignIds.length === 0) return result;
      const rows = await db
        .selectFrom('campaign_contacts')
        .select(['campaign_id', 'status', (eb) => eb.fn.countAll<string>().as('n')])
        .where('campaign_id', 'in', campaignIds)
        .groupBy(['campaign_id', 'status'])
        .execute();
      for (const row of rows) {
        const counts = result.get(row.campaign_id) as ContactCounts;
        counts[row.status] = Number(row.n);
        counts.total += Number(row.n);
      }
      return result;
    },
    contacts(db: Executor, workspaceId: string, campaignId: string, page: PageRequest, status?: ContactStatus) {
      let query = db.selectFrom('campaign_contacts').selectAll().where('workspace_id', '=', workspaceId).where('campaign_id', '=', campaignId);
      if (status) query = query.where('status', '=', status);
      if (page.after) query = query.where('id', '>', page.after);
      return query.orderBy('id', 'asc').limit(page.limit + 1).execute();
    },
    contact(db: Executor, workspaceId: string, campaignId: string, id: string) {
      return db.selectFrom('campaign_contacts').selectAll().where('workspace_id', '=', workspaceId).where('campaign_id', '=', campaignId).where('id', '=', id).executeTakeFirst();
    },
    attempts(db: Executor, contactId: string) {
      return db.selectFrom('campaign_attempts').selectAll().where('contact_id', '=', contactId).orderBy('created_at').orderBy('attempt').execute();
    },
    /** The numbers of `numbers` on the workspace's do-not-call list. */
    async doNotCall(db: Executor, workspaceId: string, numbers: string[]): Promise<Set<string>> {
      if (numbers.length === 0) return new Set();
      const rows = await db.selectFrom('dnc_numbers').select('number').where('workspace_id', '=', workspaceId).where('number', 'in', numbers).execute();
      return new Set(rows.map((r) => r.number));
    },
    /** Inserts contacts, skipping numbers the campaign already has; answers how many were new. */
    async insertContacts(db: Executor, rows: Array<Omit<ContactRow, 'attempts' | 'next_attempt_at' | 'call_id'>>): Promise<number> {
      if (rows.length === 0) return 0;
      const inserted = await db
        .insertInto('campaign_contacts')
        .values(rows.map((r) => ({ ...r, variables: JSON.stringify(r.variables) })))
        .onConflict((oc) => oc.columns(['campaign_id', 'phone']).doNothing())
        .returning('id')
        .execute();
      return inserted.length;
    },
    /** Whether any contact still waits or is being called. */
    async hasOpenContacts(db: Executor, campaignId: string): Promise<boolean> {
      const row = await sql<{ open: boolean }>`select exists(select 1 from campaign_contacts where campaign_id = ${campaignId} and status in ('pending', 'calling')) as open`.execute(db);
      return row.rows[0]?.open === true;
    },
  };
}

export type CampaignsRepo = ReturnType<typeof createCampaignsRepo>;
