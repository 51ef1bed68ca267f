import assert from 'node:assert/strict';
import { it } from 'node:test';
import { redactUrl } from './log-redaction.ts';

it('redacts invitation tokens and token/signature query parameters from logged URLs', () => {
  assert.equal(redactUrl('/v1/invitations/iv_secretTOKEN/accept'), '/v1/invitations/[redacted]/accept');
  assert.equal(redactUrl('/v1/media/stream?token=abc.def&x=1'), '/v1/media/stream?token=[redacted]&x=1');
  assert.equal(redactUrl('/v1/calls/c/recording.mp3?expires=1&signature=deadbeef'), '/v1/calls/c/recording.mp3?expires=1&signature=[redacted]');
  assert.equal(redactUrl('/v1/agents?limit=5'), '/v1/agents?limit=5');
});
