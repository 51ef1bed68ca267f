import { type Kysely, sql } from 'kysely';

// Audit rows outlive their workspace: the foreign key to workspaces (ON DELETE CASCADE) made the
// row of `DELETE /v1/workspaces/{id}` fail to insert (its workspace was just deleted) and erased
// the workspace's earlier rows with it. The key goes; audit_log_workspace_idx (workspace_id, id),
// which serves every read, stays.
export async function up(db: Kysely<unknown>): Promise<void> {
  // The constraint was declared inline (`references`), so PostgreSQL named it; find it by column.
  const { rows } = await sql<{ name: string }>`
    select con.conname as name
    from pg_constraint con
    join pg_class rel on rel.oid = con.conrelid
    join pg_namespace nsp on nsp.oid = rel.relnamespace
    join pg_attribute att on att.attrelid = rel.oid and att.attnum = any (con.conkey)
    where con.contype = 'f' and rel.relname = 'audit_log' and nsp.nspname = current_schema() and att.attname = 'workspace_id'
  `.execute(db);
  for (const { name } of rows) {
    await db.schema.alterTable('audit_log').dropConstraint(name).execute();
  }
}
