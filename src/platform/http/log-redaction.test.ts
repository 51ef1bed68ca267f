import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MAX_LOGGED_URL, redactUrl } from './log-redaction.ts';

it('redacts invitation tokens and token/signature query parameters from logged URLs', () => {
  assert.equal(redactUrl('/v1/invitations/iv_secretTOKEN/accept'), '/v1/invitations/[redacted]/accept');
  // The dashboard page the invitation mail links to.
  assert.equal(redactUrl('/invitations/iv_secretTOKEN'), '/invitations/[redacted]');
  assert.equal(redactUrl('/invitations/iv_secretTOKEN?from=mail'), '/invitations/[redacted]?from=mail');
  assert.equal(redactUrl('/v1/media/stream?token=abc.def&x=1'), '/v1/media/stream?token=[redacted]&x=1');
  assert.equal(redactUrl('/v1/calls/c/recording.mp3?expires=1&signature=deadbeef'), '/v1/calls/c/recording.mp3?expires=1&signature=[redacted]');
  assert.equal(redactUrl('/v1/agents?limit=5'), '/v1/agents?limit=5');
});

it('cuts a very long URL, after redacting it, and says how long it was', () => {
  const url = `/v1/agents/${'x'.repeat(500_000)}?token=secret`;
  const logged = redactUrl(url);
  assert.equal(logged, `${url.slice(0, MAX_LOGGED_URL)}…[${url.length - 'secret'.length + '[redacted]'.length} characters]`);
  assert.ok(!logged.includes('secret'));
  const near = `/v1/agents/${'y'.repeat(MAX_LOGGED_URL - 11)}`;
  assert.equal(redactUrl(near), near, 'a URL of the limit is written whole');
});
