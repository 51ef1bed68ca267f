import type { Timestamp } from '../db/foundation-tables.ts';

// Blobs stored in the database (BLOB_STORE=postgres; migration 0006).
export interface BlobsTable {
  key: string;
  content_type: string;
  bytes: Buffer;
  size: number;
  created_at: Timestamp;
}

export interface BlobTables {
  blobs: BlobsTable;
}
