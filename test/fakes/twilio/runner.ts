import type { CallRecord } from './call.ts';
import { MediaStream } from './media-stream.ts';
import { parseTwiml, type TwimlVerb } from './twiml.ts';

// Following TwiML on a live call, verb by verb, as Twilio does: <Connect><Stream> holds the call
// until the WebSocket closes, then the next verb runs; the end of the document hangs up. A call
// update (new TwiML or Url) replaces the running document: the open stream gets `stop` first.

/** After a <Dial>, the bridged legs talk this long (call time) before the call completes. */
const TRANSFER_TALK_MS = 1000;

/** Requests TwiML from the platform (signed); undefined, with the debugger's error logged, on failure. */
export async function fetchTwiml(call: CallRecord, url: string, method: string, extra: Record<string, string> = {}): Promise<string | undefined> {
  try {
    const answer = await call.ctx.webhooks.send(url, method, { ...call.webhookParams(), ...extra });
    if (answer.status >= 200 && answer.status < 300) return answer.body;
    call.warn(`11200: ${url} answered HTTP ${answer.status}`);
  } catch (error) {
    call.warn(`11200: ${url} could not be fetched: ${(error as Error).message}`);
  }
  return undefined;
}

/** Replaces whatever TwiML the call runs with `xml` and follows it; resolves when that run is over. */
export async function runTwiml(call: CallRecord, xml: string | undefined, documentUrl?: string): Promise<void> {
  call.run += 1;
  const run = call.run;
  // The stream of the replaced document is told to stop now (synchronously), not after a turn.
  const replaced = call.stream?.stop();
  if (xml === undefined) return call.finish('completed');
  let verbs: TwimlVerb[];
  try {
    verbs = parseTwiml(xml);
  } catch (error) {
    call.warn(`12100: the TwiML could not be parsed: ${(error as Error).message}`);
    return call.finish('completed');
  }
  const current = () => call.run === run && !call.final;
  for (const verb of verbs) {
    if (!current()) return;
    const next = await runVerb(call, verb, documentUrl, replaced);
    if (next === 'handed-over') return;
  }
  if (current()) await call.finish('completed');
}

type VerbOutcome = 'continue' | 'handed-over';

async function runVerb(call: CallRecord, verb: TwimlVerb, documentUrl: string | undefined, replaced: Promise<void> | undefined): Promise<VerbOutcome> {
  const { timers, speed } = call.ctx;
  switch (verb.verb) {
    case 'stream':
      await replaced;
      await runStream(call, verb.url, verb.parameters);
      return 'continue';
    case 'dial': {
      // Set before any await so the platform sees the transfer as soon as its update is answered.
      call.transferredTo = verb.number;
      const run = call.run;
      await timers.sleep(TRANSFER_TALK_MS / speed);
      if (call.run === run) await call.finish('completed');
      return 'handed-over';
    }
    case 'hangup':
      await call.finish('completed');
      return 'handed-over';
    case 'pause':
      await timers.sleep((verb.seconds * 1000) / speed);
      return 'continue';
    case 'say':
      return 'continue';
    case 'redirect': {
      const target = URL.canParse(verb.url, documentUrl) ? new URL(verb.url, documentUrl).toString() : verb.url;
      await runTwiml(call, await fetchTwiml(call, target, verb.method), target);
      return 'handed-over';
    }
    default:
      call.warn(`12200: <${verb.verb === 'unsupported' ? verb.name : verb.verb}> is not supported by the fake; skipped`);
      return 'continue';
  }
}

/** A bidirectional Media Stream; resolves when the WebSocket is closed, by either side. */
async function runStream(call: CallRecord, url: string, parameters: Record<string, string>): Promise<void> {
  if (call.ctx.timers.closed) return;
  const target = URL.canParse(url) ? new URL(url) : undefined;
  if (!target || (target.protocol !== 'wss:' && target.protocol !== 'ws:')) {
    call.warn(`31920: <Stream url="${url}"> is not a WebSocket address`);
    return;
  }
  if (target.search) {
    // <Stream> URLs take no query string (Twilio's docs); values belong in <Parameter>s.
    call.warn(`31920: the query string of <Stream url="${url}"> was dropped; pass values as <Parameter>s`);
    target.search = '';
  }
  const { ctx, handle } = call;
  const stream = new MediaStream({
    url: target.toString(),
    parameters,
    accountSid: ctx.accountSid,
    callSid: call.sid,
    speed: ctx.speed,
    timers: ctx.timers,
    webhooks: ctx.webhooks,
    playback: call.playback,
    onMarkReceived: (name) => handle.marksReceived.push(name),
    onMarkPlayed: (name) => handle.marksPlayed.push(name),
    onClear: () => {
      handle.clears += 1;
    },
    warn: (message) => call.warn(message),
  });
  call.stream = stream;
  call.streamParameters = { ...parameters };
  try {
    await stream.opened;
    if (!call.streamStarted.settled) call.streamStarted.resolve();
  } catch (error) {
    call.warn((error as Error).message);
    if (!call.streamStarted.settled) call.streamStarted.reject(error as Error);
  }
  await stream.closed;
  if (call.stream === stream) {
    call.stream = undefined;
    call.playback.markSink = undefined;
    call.playback.dropQueue();
  }
}
