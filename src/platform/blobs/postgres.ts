import { sql } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { BlobStore } from '../../ports/blobs.ts';

// Blobs in the database (BLOB_STORE=postgres): every instance reads what any other wrote. A range
// is cut by substring() in the database, so only those bytes leave it.

export function createDatabaseBlobStore(db: Database): BlobStore {
  return {
    kind: 'postgres',
    async put(key, bytes, contentType) {
      await db
        .insertInto('blobs')
        .values({ key, content_type: contentType, bytes, size: bytes.length, created_at: new Date() })
        .onConflict((oc) => oc.column('key').doUpdateSet({ content_type: contentType, bytes, size: bytes.length, created_at: new Date() }))
        .execute();
    },
    async get(key) {
      const row = await db.selectFrom('blobs').select(['bytes', 'content_type', 'size']).where('key', '=', key).executeTakeFirst();
      return row ? { bytes: Buffer.from(row.bytes), contentType: row.content_type, size: row.size } : null;
    },
    async getRange(key, start, end) {
      const row = await db
        .selectFrom('blobs')
        .select([sql<Buffer>`substring(bytes from ${start + 1}::integer for ${end - start + 1}::integer)`.as('part'), 'content_type', 'size'])
        .where('key', '=', key)
        .executeTakeFirst();
      return row ? { bytes: Buffer.from(row.part), contentType: row.content_type, size: row.size } : null;
    },
    async stat(key) {
      const row = await db.selectFrom('blobs').select(['content_type', 'size']).where('key', '=', key).executeTakeFirst();
      return row ? { size: row.size, contentType: row.content_type } : null;
    },
    async delete(key) {
      await db.deleteFrom('blobs').where('key', '=', key).execute();
    },
  };
}
