import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { resolveJwtSecret } from './jwt.ts';

// The key access tokens are signed with: JWT_SECRET when set; otherwise DATA_DIR/jwt-secret,
// generated on the first start and read on every later one (real files in a temporary directory).

async function tempDir(t: TestContext): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vap-jwt-secret-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('the JWT secret', () => {
  it('is JWT_SECRET when it is set, whatever DATA_DIR holds', async (t) => {
    const dataDir = await tempDir(t);
    await fs.writeFile(path.join(dataDir, 'jwt-secret'), 'the-secret-in-the-file');
    assert.equal(await resolveJwtSecret('the-configured-secret', dataDir), 'the-configured-secret');
  });

  it('without JWT_SECRET, is generated on the first start (48 random bytes) into DATA_DIR/jwt-secret, readable by its owner only, and read back after', async (t) => {
    // DATA_DIR does not exist yet, nor its parent: it is created.
    const dataDir = path.join(await tempDir(t), 'data', 'instance');
    const secret = await resolveJwtSecret(undefined, dataDir);
    assert.match(secret, /^[A-Za-z0-9_-]{64}$/, '48 random bytes in base64url');
    const file = path.join(dataDir, 'jwt-secret');
    assert.equal(await fs.readFile(file, 'utf8'), secret);
    assert.equal((await fs.stat(file)).mode & 0o777, 0o600);
    assert.equal(await resolveJwtSecret(undefined, dataDir), secret, 'the next start reads the same secret');
  });

  it('reads a secret file written by hand without its trailing newline', async (t) => {
    const dataDir = await tempDir(t);
    await fs.writeFile(path.join(dataDir, 'jwt-secret'), 'a-secret-written-with-echo\n');
    assert.equal(await resolveJwtSecret(undefined, dataDir), 'a-secret-written-with-echo');
  });

  it('when another writer creates the file between its read and its write, keeps that secret (trimmed) and does not overwrite it', async (t) => {
    const dataDir = await tempDir(t);
    const file = path.join(dataDir, 'jwt-secret');
    // The race two starts on one DATA_DIR (or a start and a provisioning script) can run: the file
    // appears after this start found none, just before it writes its own.
    const writeFile = fs.writeFile;
    t.mock.method(fs, 'writeFile', async (...args: Parameters<typeof fs.writeFile>) => {
      await writeFile(file, 'the-other-writers-secret\n');
      return writeFile(...args);
    });
    assert.equal(await resolveJwtSecret(undefined, dataDir), 'the-other-writers-secret');
    t.mock.restoreAll();
    assert.equal(await fs.readFile(file, 'utf8'), 'the-other-writers-secret\n');
  });
});
