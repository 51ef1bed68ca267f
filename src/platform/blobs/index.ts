import path from 'node:path';
import type { Database } from '../db/schema.ts';
import { createFsBlobStore } from './fs.ts';
import type { BlobStore } from '../../ports/blobs.ts';
import { createDatabaseBlobStore } from './postgres.ts';

/** The deployment's blob store: DATA_DIR/blobs, or the database when BLOB_STORE=postgres. */
export function createBlobStore(config: { blobStore: 'fs' | 'postgres'; dataDir: string }, db: Database): BlobStore {
  return config.blobStore === 'postgres' ? createDatabaseBlobStore(db) : createFsBlobStore(path.join(config.dataDir, 'blobs'));
}
