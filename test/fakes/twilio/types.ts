// The public surface of the local fake Twilio (see index.ts): what tests configure and observe.

export interface FakeTwilioOptions {
  /** 'AC' + 32 hex. */
  accountSid: string;
  authToken: string;
  /** Numbers AvailablePhoneNumbers offers (E.164); default: twenty +1415555 01xx numbers. */
  available?: string[];
  /** Numbers already on the account (IncomingPhoneNumbers) at start. */
  owned?: string[];
  /** Media pacing speed (1 = real time; 10 = ten times faster); default 1. Also scales rings and AMD. */
  speed?: number;
  /** Behind a proxy: Twilio signs with the public URL but the fake connects to the local address,
   *  adding X-Forwarded-Proto / X-Forwarded-Host / X-Forwarded-For as a TLS-terminating proxy does. */
  proxy?: { publicBaseUrl: string; localBaseUrl: string };
}

export interface RestRequestRecord {
  method: string;
  path: string;
  params: Record<string, string | string[]>;
}

export interface FakeNumber {
  sid: string;
  phoneNumber: string;
  voiceUrl: string | null;
  statusCallback: string | null;
}

export interface FakeTwilio {
  /** http://127.0.0.1:<port>: the REST root (TWILIO_API_BASE_URL). */
  baseUrl: string;
  /** Every REST request, in order. */
  requests: RestRequestRecord[];
  /** The account's IncomingPhoneNumbers. */
  numbers(): FakeNumber[];
  /** What the far end of an outbound call to `to` does (default: a human answers at once). */
  setCallee(to: string, callee: FakeCallee): void;
  /** A caller dials one of the account's numbers: signed request to its VoiceUrl, then the TwiML is
   *  followed in the background. Resolves once the voice webhook has answered. */
  placeInboundCall(input: { from: string; to: string }): Promise<FakeCall>;
  /** The call created by calls.create to `to` (each call is handed out once, oldest first). */
  waitForCall(to: string, timeoutMs?: number): Promise<FakeCall>;
  close(): Promise<void>;
}

export interface FakeCallee {
  answer: 'human' | 'machine' | 'busy' | 'no-answer' | 'failed';
  /** How long answering machine detection takes (call time); default 1500 ms. */
  amdDelayMs?: number;
  /** How long the phone rings before the outcome (call time); default 100 ms. */
  ringMs?: number;
  /**
   * With AsyncAmd: the detection's result is POSTed, and answered, before the voice Url is asked
   * for TwiML, so the verdict reaches the platform before the call's Media Stream (a slow network
   * to the platform, or a loaded platform, puts them in this order).
   */
  verdictBeforeMedia?: boolean;
  /**
   * With AsyncAmd: the detection's result is POSTed `amdDelayMs` after the platform's first words
   * started to play, not after the answer: the verdict that comes while the agent talks over the
   * machine's greeting, whatever a loaded machine does to the platform's start.
   */
  verdictWhileAgentSpeaks?: boolean;
}

export interface FakeCall {
  /** 'CA' + 32 hex. */
  sid: string;
  /** queued, ringing, in-progress, completed, busy, failed, no-answer, canceled. */
  status(): string;
  /** WebSocket open, `connected` and `start` sent. Rejects if the call ends first or the handshake fails. */
  streamStarted: Promise<void>;
  /** The <Parameter>s of the <Stream> (start.customParameters). */
  streamParameters(): Record<string, string>;
  /** The caller speaks: PCM16 mono 16 kHz → 8 kHz → mu-law → 20 ms `media` messages, paced at `speed`. */
  say(pcm16k: Int16Array): Promise<void>;
  /** The caller speaks mu-law as given (8 kHz): 160 bytes per 20 ms `media` message, paced. */
  sayMulaw(mulaw: Uint8Array): Promise<void>;
  /** Mu-law silence frames for `ms` (paced). */
  silence(ms: number): Promise<void>;
  /** A `dtmf` message. */
  pressDigit(digit: string): void;
  /** All agent audio played so far (decoded from mu-law, PCM16 8 kHz). */
  agentAudio(): Int16Array;
  /** Every agent `media` payload received so far, as bytes, in order (also what a clear dropped unplayed). */
  agentMulaw(): Uint8Array;
  /** Resolves once agent speech has played since the last waitForAgentQuiet resolved (or since the
   *  call began): "the agent started speaking", even if it started before this call. */
  waitForAgentAudio(timeoutMs?: number): Promise<void>;
  /** Resolves once no agent speech has played for `quietMs` of call time: "the agent stopped speaking". */
  waitForAgentQuiet(quietMs: number, timeoutMs?: number): Promise<void>;
  /** Names of marks the platform sent. */
  marksReceived: string[];
  /** Names the fake echoed back (played, or flushed by clear). */
  marksPlayed: string[];
  /** `clear` messages received. */
  clears: number;
  dtmfSent: string[];
  /** POST Calls/{sid}.json the platform made. */
  updates: Array<{ twiml?: string; status?: string; url?: string }>;
  /** The number of a <Dial> in updated TwiML. */
  transferredTo(): string | null;
  /** The caller hangs up: stream `stop`, WS closed, status callback completed. */
  hangUp(): Promise<void>;
  /** The call reached a final status. */
  ended: Promise<{ status: string }>;
  /** Params of every status / AMD callback the fake sent. */
  statusCallbacks: Array<Record<string, string>>;
  /** What Twilio's debugger would log for this call (webhook failures, bad stream messages …). */
  errors: string[];
}
