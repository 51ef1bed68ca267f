import fs from 'node:fs/promises';
import path from 'node:path';
import type { Database } from '../db/schema.ts';
import type { BlobStore } from './port.ts';

// Placeholder until fs.ts/postgres.ts land (helper task): a minimal filesystem store.
export function createBlobStore(config: { blobStore: 'fs' | 'postgres'; dataDir: string }, _db: Database): BlobStore {
  const dir = path.join(config.dataDir, 'blobs');
  const file = (key: string) => path.join(dir, key);
  return {
    kind: 'fs',
    async put(key, bytes) {
      await fs.mkdir(path.dirname(file(key)), { recursive: true });
      await fs.writeFile(file(key), bytes);
    },
    async get(key) {
      const bytes = await fs.readFile(file(key)).catch(() => null);
      return bytes ? { bytes, contentType: 'audio/mpeg', size: bytes.length } : null;
    },
    async getRange(key, start, end) {
      const bytes = await fs.readFile(file(key)).catch(() => null);
      return bytes ? { bytes: bytes.subarray(start, end + 1), contentType: 'audio/mpeg', size: bytes.length } : null;
    },
    async stat(key) {
      const s = await fs.stat(file(key)).catch(() => null);
      return s ? { size: s.size, contentType: 'audio/mpeg' } : null;
    },
    async delete(key) {
      await fs.rm(file(key), { force: true });
    },
  };
}
