import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore } from '../../ports/blobs.ts';

// Blobs as files under one directory (DATA_DIR/blobs): keys are relative paths, checked so that
// none leaves the directory; writes go to a temporary file renamed into place (a reader never
// sees half a file); a range reads only its bytes. The content type is kept beside the file. A
// process killed between its write and the rename leaves `<file>.<hex>.tmp`: deleting the key
// removes those leftovers too, so a crashed writer's half-written blob goes with its key.

const KEY = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*(\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$/;

export function createFsBlobStore(dir: string): BlobStore {
  function fileOf(key: string): string {
    if (!KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.')) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
    return path.join(dir, key);
  }
  const typeFile = (file: string) => `${file}.type`;

  async function stat(key: string) {
    const file = fileOf(key);
    const info = await fs.stat(file).catch(() => null);
    if (!info) return null;
    const contentType = await fs.readFile(typeFile(file), 'utf8').catch(() => 'application/octet-stream');
    return { size: info.size, contentType };
  }

  return {
    kind: 'fs',
    async put(key, bytes, contentType) {
      const file = fileOf(key);
      await fs.mkdir(path.dirname(file), { recursive: true });
      const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      await fs.writeFile(temp, bytes);
      await fs.writeFile(typeFile(file), contentType);
      await fs.rename(temp, file);
    },
    async get(key) {
      const found = await stat(key);
      if (!found) return null;
      const bytes = await fs.readFile(fileOf(key)).catch(() => null);
      return bytes ? { bytes, contentType: found.contentType, size: bytes.length } : null;
    },
    async getRange(key, start, end) {
      const found = await stat(key);
      if (!found) return null;
      const handle = await fs.open(fileOf(key), 'r');
      try {
        const length = Math.max(0, Math.min(end, found.size - 1) - start + 1);
        const bytes = Buffer.alloc(length);
        await handle.read(bytes, 0, length, start);
        return { bytes, contentType: found.contentType, size: found.size };
      } finally {
        await handle.close();
      }
    },
    stat,
    async delete(key) {
      const file = fileOf(key);
      await fs.rm(file, { force: true });
      await fs.rm(typeFile(file), { force: true });
      const prefix = `${path.basename(file)}.`;
      const names = await fs.readdir(path.dirname(file)).catch(() => [] as string[]);
      const leftovers = names.filter((name) => name.startsWith(prefix) && name.endsWith('.tmp'));
      await Promise.all(leftovers.map((name) => fs.rm(path.join(path.dirname(file), name), { force: true })));
    },
  };
}
