import { type Kysely, sql } from 'kysely';

// Twilio calls: the single-use token of a call's Media Stream (kept as its SHA-256, cleared when
// the stream presents it) and the lookup of a call by Twilio's CallSid.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('calls').addColumn('stream_token_hash', 'text').execute();
  await sql`create index calls_provider_call_id on calls (provider, provider_call_id) where provider_call_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists calls_provider_call_id`.execute(db);
  await db.schema.alterTable('calls').dropColumn('stream_token_hash').execute();
}
