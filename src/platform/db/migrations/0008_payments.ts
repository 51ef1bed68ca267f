import { type Kysely, sql } from 'kysely';

// Payments (wallet top-ups), the provider events already applied (each credits at most once), and
// the auto-recharge latch of a wallet (armed again once the balance is back at its threshold).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('payments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull().defaultTo('USD'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_ref', 'text')
    .addColumn('payment_method', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('checkout_url', 'text')
    .addColumn('trigger', 'text', (c) => c.notNull().defaultTo('manual'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('settled_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('payments_workspace_idx').on('payments').columns(['workspace_id', 'id']).execute();
  await sql`create unique index payments_provider_ref on payments (provider, provider_ref) where provider_ref is not null`.execute(db);

  await db.schema
    .createTable('payment_provider_events')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('payment_id', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema.alterTable('wallets').addColumn('recharge_armed', 'boolean', (c) => c.notNull().defaultTo(true)).execute();
}
