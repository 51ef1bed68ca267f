import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashPassword, verifyPassword } from './passwords.ts';

// Password hashes: argon2id at the library's recommended cost; a stored value that is no argon2
// hash (imported from elsewhere, corrupted) refuses every password instead of throwing.

describe('password hashes', () => {
  it('are argon2id (19 MiB, t=2, p=1) and verify their password only', async () => {
    const stored = await hashPassword('correct horse battery');
    assert.match(stored, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.equal(await verifyPassword(stored, 'correct horse battery'), true);
    assert.equal(await verifyPassword(stored, 'correct horse battery '), false);
  });

  it('a stored value that is not an argon2 hash refuses every password: false, not an error', async () => {
    const bcrypt = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
    for (const stored of [bcrypt, 'correct horse battery', '']) {
      assert.equal(await verifyPassword(stored, 'correct horse battery'), false, stored);
    }
  });
});
