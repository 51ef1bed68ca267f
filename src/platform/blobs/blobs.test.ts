import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { testDatabase } from '../../../test/support/database.ts';
import { createBlobStore } from './index.ts';
import type { BlobStore } from '../../ports/blobs.ts';

// One contract, both stores: the filesystem (DATA_DIR/blobs) and the database (BLOB_STORE=postgres).

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-blobs-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const database = await testDatabase();

for (const kind of ['fs', 'postgres'] as const) {
  describe(`blob store: ${kind}`, () => {
    const store: BlobStore = createBlobStore({ blobStore: kind, dataDir: dir }, database.db);
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

    it('stores, reads whole and by range, stats, overwrites and deletes', async () => {
      assert.equal(store.kind, kind);
      const key = `recordings/ws_test/${kind}-1.mp3`;
      assert.equal(await store.get(key), null);
      assert.equal(await store.stat(key), null);
      await store.put(key, bytes, 'audio/mpeg');
      assert.deepEqual(await store.stat(key), { size: 1000, contentType: 'audio/mpeg' });
      const whole = await store.get(key);
      assert.deepEqual(whole?.bytes, bytes);
      const part = await store.getRange(key, 10, 19);
      assert.deepEqual(part?.bytes, bytes.subarray(10, 20));
      assert.equal(part?.size, 1000);
      assert.deepEqual((await store.getRange(key, 990, 999))?.bytes, bytes.subarray(990));
      await store.put(key, Buffer.from('short'), 'text/plain');
      assert.deepEqual(await store.stat(key), { size: 5, contentType: 'text/plain' });
      await store.delete(key);
      assert.equal(await store.get(key), null);
      await store.delete(key);
    });

    if (kind === 'fs') {
      it('refuses keys that would leave its directory', async () => {
        for (const key of ['../escape', 'a/../../b', '/etc/passwd', 'a\u0000b', '']) {
          await assert.rejects(store.put(key, bytes, 'audio/mpeg'), /invalid blob key/);
        }
        assert.equal(fs.existsSync(path.join(dir, '..', 'escape')), false);
      });

      it('deletes with its key the temporary files a writer killed before its rename left', async () => {
        const key = 'recordings/raw/ws_test/call_crash/agent-00001.pcm';
        const other = 'recordings/raw/ws_test/call_crash/agent-00010.pcm';
        await store.put(other, bytes, 'application/octet-stream');
        const folder = path.join(dir, 'blobs', 'recordings/raw/ws_test/call_crash');
        // What a process killed mid-put leaves: the temporary file (and perhaps the type), no blob.
        fs.writeFileSync(path.join(folder, 'agent-00001.pcm.53fba0ee2130.tmp'), bytes.subarray(0, 10));
        fs.writeFileSync(path.join(folder, 'agent-00001.pcm.type'), 'application/octet-stream');
        await store.delete(key);
        assert.deepEqual(fs.readdirSync(folder).sort(), ['agent-00010.pcm', 'agent-00010.pcm.type'], 'the leftovers went, another key stayed');
        assert.deepEqual((await store.get(other))?.bytes, bytes);
        await store.delete('recordings/raw/ws_test/no_such_folder/agent-00000.pcm');
      });
    }
  });
}
