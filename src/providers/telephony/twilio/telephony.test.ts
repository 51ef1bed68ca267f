import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { startFakeTwilio } from '../../../../test/fakes/twilio/index.ts';
import { createTwilioTelephony } from './telephony.ts';
import { createTwilioClient } from './client.ts';

// The Twilio adapter's dial on its own, through the real SDK against the local fake Twilio: a
// status callback settles it; a dial that hears nothing here (with several instances, the call's
// stream and final status can all reach another one) ends at its deadline instead of waiting forever.

const ACCOUNT_SID = `AC${'d1'.repeat(16)}`;
const AUTH_TOKEN = 'adapter-test-token';

// The deployment Twilio calls back: it hands final statuses to the adapter, as the platform's route does.
let onStatus: (callId: string, status: string) => void = () => undefined;
const deployment = http.createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://deployment');
    const status = new URLSearchParams(body).get('CallStatus');
    if (url.pathname.endsWith('/status') && status) onStatus(url.searchParams.get('call_id') ?? '', status);
    res.writeHead(200, { 'content-type': 'text/xml' }).end('<Response/>');
  });
});
await new Promise<void>((resolve) => deployment.listen(0, '127.0.0.1', resolve));
const publicBaseUrl = `http://127.0.0.1:${(deployment.address() as AddressInfo).port}`;
const fake = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, owned: ['+14155550100'] });
after(async () => {
  await fake.close();
  await new Promise((resolve) => deployment.close(resolve));
});
const client = createTwilioClient({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl });

describe('Twilio adapter dial', () => {
  it('a final status callback settles the dial', async () => {
    const telephony = createTwilioTelephony({ client, publicBaseUrl, dialDeadlineMs: 20_000 });
    onStatus = (callId, status) => telephony.statusChanged(callId, status);
    fake.setCallee('+14155550111', { answer: 'busy', ringMs: 50 });
    const outcome = await telephony.dial({ callId: 'call_busy', from: '+14155550100', to: '+14155550111', simulation: null as never, signal: new AbortController().signal });
    assert.deepEqual(outcome, { kind: 'busy' });
    assert.equal(telephony.isDialing('call_busy'), false);
  });

  it('a dial nothing settles here ends at its deadline, and forgets the call', async () => {
    const telephony = createTwilioTelephony({ client, publicBaseUrl, dialDeadlineMs: 300 });
    // Its status callbacks go elsewhere: this instance never hears of the call again.
    onStatus = () => undefined;
    // It rings past the deadline and its no-answer goes elsewhere: only the deadline can end this dial
    // (the outcome says which), whatever a loaded machine does to the wall between the steps.
    fake.setCallee('+14155550112', { answer: 'no-answer', ringMs: 3000 });
    const outcome = await telephony.dial({ callId: 'call_elsewhere', from: '+14155550100', to: '+14155550112', simulation: null as never, signal: new AbortController().signal });
    assert.deepEqual(outcome, { kind: 'failed', message: 'no answer nor final status reached this instance in time' });
    assert.equal(telephony.isDialing('call_elsewhere'), false);
    assert.equal(telephony.statusChanged('call_elsewhere', 'no-answer'), false, 'a late status finds no dial');
  });
});
