import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../../../test/support/app.ts';
import { type SentMail as StoredMail, sentMails } from '../../../test/support/mail.ts';

// Helpers shared by the auth module's tests: reading mails the local mailer wrote to
// DATA_DIR/mail/*.json, and checking that no response leaks a stored secret.

export type SentMail = StoredMail<{ purpose?: string; token?: string; link?: string }>;

/** Mails sent to `to` (any purpose, or one), oldest first. */
export function mailsTo(t: TestApp, to: string, purpose?: string): SentMail[] {
  return sentMails<NonNullable<SentMail['meta']>>(t)
    .filter((mail) => mail.to === to.toLowerCase() || mail.to === to)
    .filter((mail) => purpose === undefined || mail.meta?.purpose === purpose);
}

/** The token of the only mail of this purpose sent to `to`. */
export function mailedToken(t: TestApp, to: string, purpose: 'verify_email' | 'password_reset'): string {
  const mails = mailsTo(t, to, purpose);
  assert.equal(mails.length, 1, `expected one ${purpose} mail to ${to}, found ${mails.length}`);
  const token = mails[0].meta?.token;
  assert.ok(token, 'the mail carries its token');
  assert.ok(mails[0].text.includes(token), 'the mail text carries the token');
  return token;
}

/** No password hash, token hash or hash-like column leaks into a response. */
export function assertNoSecrets(res: LightMyRequestResponse) {
  const body = res.body;
  assert.doesNotMatch(body, /\$argon2/, 'a password hash leaked');
  assert.doesNotMatch(body, /password_hash|token_hash|key_hash/, 'a hash column leaked');
  assert.doesNotMatch(body, /\b[0-9a-f]{64}\b/, 'a SHA-256 hex digest leaked');
}
