import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeContext } from './call.ts';
import { defaultAvailableNumbers, NumberInventory } from './numbers.ts';
import { createRestHandler } from './rest.ts';
import { Timers } from './support.ts';
import { Switchboard } from './switchboard.ts';
import type { FakeTwilio, FakeTwilioOptions, RestRequestRecord } from './types.ts';
import { WebhookClient } from './webhook.ts';

// A local Twilio for tests and benchmarks, written from Twilio's documentation: the REST API
// 2010-04-01 (Calls, IncomingPhoneNumbers, AvailablePhoneNumbers) reached through the official SDK,
// signed voice webhooks and status / AMD callbacks, TwiML, and bidirectional Media Streams over a
// WebSocket it dials to the platform. Point the SDK at `baseUrl` (TWILIO_API_BASE_URL).

export type { FakeCall, FakeCallee, FakeNumber, FakeTwilio, FakeTwilioOptions, RestRequestRecord } from './types.ts';

export async function startFakeTwilio(options: FakeTwilioOptions): Promise<FakeTwilio> {
  if (!/^AC[0-9a-f]{32}$/.test(options.accountSid)) throw new Error("accountSid must be 'AC' followed by 32 lowercase hex digits");
  const speed = options.speed ?? 1;
  if (!(speed > 0)) throw new Error('speed must be a positive number');
  const timers = new Timers();
  const webhooks = new WebhookClient(options.authToken, options.proxy);
  const ctx: FakeContext = { accountSid: options.accountSid, speed, timers, webhooks };
  const inventory = new NumberInventory(options.accountSid, options.available ?? defaultAvailableNumbers(), options.owned ?? []);
  const switchboard = new Switchboard(ctx, inventory);
  const requests: RestRequestRecord[] = [];
  const server = http.createServer(
    createRestHandler({ accountSid: options.accountSid, authToken: options.authToken, requests, switchboard, inventory, createdAt: new Date() }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    numbers: () => inventory.summaries(),
    setCallee: (to, callee) => switchboard.setCallee(to, callee),
    placeInboundCall: (input) => switchboard.placeInbound(input),
    waitForCall: (to, timeoutMs) => switchboard.waitForCall(to, timeoutMs),
    close() {
      closing ??= (async () => {
        switchboard.close();
        timers.close();
        webhooks.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closing;
    },
  };
}
