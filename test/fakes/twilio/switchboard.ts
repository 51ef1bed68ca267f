import { CallRecord, type FakeContext } from './call.ts';
import type { NumberInventory, RestAnswer } from './numbers.ts';
import { DEFAULT_CALLEE, dialOutbound, type OutboundPlan } from './outbound.ts';
import { fetchTwiml, runTwiml } from './runner.ts';
import { API_VERSION, twilioError } from './support.ts';
import type { FakeCall, FakeCallee } from './types.ts';

// The account's calls: those the platform creates through POST Calls.json (handed to tests by
// waitForCall), those a test dials in to one of the account's numbers, and the Calls REST
// operations on them (fetch, list, update).

const WAIT_CALL_MS = 10_000;
const DEFAULT_PAGE_SIZE = 50;
const DEFAULT_TIMEOUT_S = 60;
const STATUS_EVENTS = new Set(['initiated', 'ringing', 'answered', 'completed']);

export class Switchboard {
  private readonly calls = new Map<string, CallRecord>();
  /** Outbound calls not yet handed to a test, oldest first. */
  private unclaimed: CallRecord[] = [];
  private readonly callees = new Map<string, FakeCallee>();

  constructor(
    private readonly ctx: FakeContext,
    private readonly inventory: NumberInventory,
  ) {}

  setCallee(to: string, callee: FakeCallee): void {
    this.callees.set(to, callee);
  }

  /** POST Calls.json */
  create(params: URLSearchParams): RestAnswer {
    const to = params.get('To');
    const from = params.get('From');
    const url = params.get('Url') ?? undefined;
    const twiml = params.get('Twiml') ?? undefined;
    if (!to) return fail(400, 21201, "No 'To' number is specified");
    if (!from) return fail(400, 21213, "No 'From' number is specified");
    if (!url && !twiml) return fail(400, 21205, "A 'Url' or 'Twiml' parameter is required");
    if (url && !/^https?:$/.test(URL.canParse(url) ? new URL(url).protocol : '')) return fail(400, 21205, `Url is not a valid URL: ${url}`);
    const owned = this.inventory.findByPhoneNumber(from);
    if (!owned) return fail(400, 21210, `The source phone number provided, ${from}, is not yet verified for your account.`);
    const statusCallback = params.get('StatusCallback');
    // StatusCallbackEvent is repeated; a space-separated list is accepted too.
    const requested = params.getAll('StatusCallbackEvent').flatMap((value) => value.split(/\s+/));
    const events = new Set(requested.filter((event) => STATUS_EVENTS.has(event)));
    if (events.size === 0) events.add('completed');
    const call = new CallRecord(this.ctx, {
      direction: 'outbound-api',
      to,
      from,
      phoneNumberSid: owned.sid,
      statusCallback: statusCallback ? { url: statusCallback, method: params.get('StatusCallbackMethod') ?? 'POST', events } : null,
    });
    const machineDetection = params.get('MachineDetection') ?? undefined;
    const amdCallback = params.get('AsyncAmdStatusCallback');
    const plan: OutboundPlan = {
      url,
      twiml,
      method: params.get('Method') ?? 'POST',
      machineDetection: machineDetection === 'Enable' || machineDetection === 'DetectMessageEnd' ? machineDetection : undefined,
      asyncAmd: params.get('AsyncAmd') === 'true',
      asyncAmdStatusCallback: amdCallback ? { url: amdCallback, method: params.get('AsyncAmdStatusCallbackMethod') ?? 'POST' } : undefined,
      ringTimeoutMs: (Number(params.get('Timeout') ?? DEFAULT_TIMEOUT_S) || DEFAULT_TIMEOUT_S) * 1000,
    };
    this.calls.set(call.sid, call);
    this.unclaimed.push(call);
    const callee = this.callees.get(to) ?? DEFAULT_CALLEE;
    dialOutbound(call, plan, callee).catch((error: Error) => call.warn(`the fake failed: ${error.stack}`));
    return { status: 201, body: call.json() };
  }

  fetch(sid: string): RestAnswer | undefined {
    const call = this.calls.get(sid);
    return call && { status: 200, body: call.json() };
  }

  list(query: URLSearchParams): RestAnswer {
    const pageSize = Math.min(Number(query.get('PageSize') ?? DEFAULT_PAGE_SIZE) || DEFAULT_PAGE_SIZE, 1000);
    const found = [...this.calls.values()]
      .reverse()
      .filter((call) => !query.get('To') || call.setup.to === query.get('To'))
      .filter((call) => !query.get('From') || call.setup.from === query.get('From'))
      .filter((call) => !query.get('Status') || call.status === query.get('Status'))
      .slice(0, pageSize);
    const uri = `/${API_VERSION}/Accounts/${this.ctx.accountSid}/Calls.json?PageSize=${pageSize}&Page=0`;
    return {
      status: 200,
      body: { calls: found.map((call) => call.json()), first_page_uri: uri, next_page_uri: null, previous_page_uri: null, page: 0, page_size: pageSize, start: 0, end: Math.max(0, found.length - 1), uri },
    };
  }

  /** POST Calls/{Sid}.json: Status=completed|canceled ends it; Twiml or Url replaces what it runs. */
  update(sid: string, params: URLSearchParams): RestAnswer | undefined {
    const call = this.calls.get(sid);
    if (!call) return undefined;
    const status = params.get('Status') ?? undefined;
    const twiml = params.get('Twiml') ?? undefined;
    const url = params.get('Url') ?? undefined;
    if (call.final) return fail(400, 21220, 'Call is not in-progress. Cannot redirect.');
    if (status !== undefined && status !== 'completed' && status !== 'canceled') return fail(400, 20001, `Invalid Status: ${status}`);
    call.handle.updates.push({ ...(twiml !== undefined && { twiml }), ...(status !== undefined && { status }), ...(url !== undefined && { url }) });
    const answered = call.status === 'in-progress';
    if (status !== undefined) {
      // completed hangs up a call in progress; either one cancels a call still queued or ringing.
      if (!answered) void call.finish('canceled');
      else if (status === 'completed') void call.finish('completed');
    } else if (twiml !== undefined && answered) {
      runTwiml(call, twiml).catch((error: Error) => call.warn(`the fake failed: ${error.stack}`));
    } else if (url !== undefined && answered) {
      const method = params.get('Method') ?? 'POST';
      // The old document stops at once; the new one runs when the platform has answered.
      call.run += 1;
      void call.stream?.stop();
      fetchTwiml(call, url, method)
        .then((xml) => runTwiml(call, xml, url))
        .catch((error: Error) => call.warn(`the fake failed: ${error.stack}`));
    }
    return { status: 200, body: call.json() };
  }

  /** The oldest outbound call to `to` not yet handed out. */
  async waitForCall(to: string, timeoutMs = WAIT_CALL_MS): Promise<FakeCall> {
    let found: CallRecord | undefined;
    await this.ctx.timers.waitUntil(
      () => {
        found = this.unclaimed.find((call) => call.setup.to === to);
        return found !== undefined;
      },
      timeoutMs,
      `a call to ${to}`,
    );
    this.unclaimed = this.unclaimed.filter((call) => call !== found);
    return found!.handle;
  }

  /** A caller dials one of the account's numbers: its VoiceUrl is asked for TwiML, which then runs. */
  async placeInbound(input: { from: string; to: string }): Promise<FakeCall> {
    const number = this.inventory.voiceSettings(input.to);
    if (!number) throw new Error(`${input.to} is not a number of this account`);
    if (!number.voiceUrl) throw new Error(`${input.to} has no VoiceUrl`);
    const call = new CallRecord(this.ctx, {
      direction: 'inbound',
      to: input.to,
      from: input.from,
      phoneNumberSid: number.sid,
      // A number's StatusCallback hears only of the end of its calls.
      statusCallback: number.statusCallback ? { url: number.statusCallback, method: number.statusCallbackMethod, events: new Set(['completed']) } : null,
    });
    this.calls.set(call.sid, call);
    const twiml = await fetchTwiml(call, number.voiceUrl, number.voiceMethod);
    if (twiml !== undefined) call.setStatus('in-progress');
    runTwiml(call, twiml, number.voiceUrl).catch((error: Error) => call.warn(`the fake failed: ${error.stack}`));
    return call.handle;
  }

  close(): void {
    const closing = new Error('fake Twilio closed');
    for (const call of this.calls.values()) {
      call.run += 1;
      call.stream?.terminate();
      call.playback.stop(closing);
      if (!call.streamStarted.settled) call.streamStarted.reject(closing);
    }
  }
}

function fail(status: number, code: number, message: string): RestAnswer {
  return { status, body: twilioError(status, code, message) };
}
