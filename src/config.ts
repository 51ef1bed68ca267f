// Every environment variable the service reads, parsed once into a typed value.
// A bad value throws ConfigError naming the variable; server.ts prints that one line and exits.
// docs/configuration.md lists each variable; keep the two in step.
import path from 'node:path';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function str(env: Env, name: string, fallback: string): string {
  return read(env, name) ?? fallback;
}

function optional(env: Env, name: string): string | undefined {
  return read(env, name);
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `expected an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function decimal(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new ConfigError(name, `expected a number, got "${raw}"`);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

function oneOf<const T extends readonly string[]>(env: Env, name: string, allowed: T, fallback: T[number]): T[number] {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!allowed.includes(raw)) throw new ConfigError(name, `expected one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T[number];
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `expected a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `expected a ${protocols.join(' or ')} URL, got "${parsed.protocol}"`);
  }
  return raw;
}

function publishableKey(env: Env): string | undefined {
  const key = optional(env, 'STRIPE_PUBLISHABLE_KEY');
  if (key !== undefined && !/^pk_(test|live)_[A-Za-z0-9_]+$/.test(key)) throw new ConfigError('STRIPE_PUBLISHABLE_KEY', 'expected a Stripe publishable key (pk_test_… or pk_live_…)');
  return key;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a retry schedule such as `0,1m,5m` or `1s,2s` into millisecond offsets from the first attempt. */
export function parseSchedule(name: string, raw: string): number[] {
  const offsets = raw.split(',').map((part) => {
    const match = /^(\d+)(ms|s|m|h|d)?$/.exec(part.trim());
    if (!match) throw new ConfigError(name, `expected durations like "1s,2s" or "1m,5m", got "${part.trim()}"`);
    return Number(match[1]) * DURATION_UNITS[match[2] ?? 's'];
  });
  for (let i = 1; i < offsets.length; i++) {
    if (offsets[i] < offsets[i - 1]) throw new ConfigError(name, 'offsets must not decrease');
  }
  return offsets;
}

function schedule(env: Env, name: string, fallback: string): number[] {
  return parseSchedule(name, read(env, name) ?? fallback);
}

/** TRUST_PROXY: false (default), true, a hop count, or a comma list of proxy addresses/CIDRs. */
function trustProxy(env: Env, name: string): boolean | number | string[] {
  const raw = read(env, name);
  if (raw === undefined || ['false', '0', 'no'].includes(raw.toLowerCase())) return false;
  if (['true', 'yes'].includes(raw.toLowerCase())) return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (entries.some((e) => !/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(e))) {
    throw new ConfigError(name, `expected true, false, a hop count or a comma list of addresses/CIDRs, got "${raw}"`);
  }
  return entries;
}

function csv(env: Env, name: string): string[] {
  const raw = read(env, name);
  return raw === undefined ? [] : raw.split(',').map((s) => s.trim()).filter(Boolean);
}

/** `key=value,key2=value2` (values percent-decoded), as the OpenTelemetry specification writes OTLP headers. */
function otlpHeaders(env: Env, name: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of csv(env, name)) {
    const at = entry.indexOf('=');
    if (at <= 0) throw new ConfigError(name, 'expected key=value pairs separated by commas');
    try {
      headers[entry.slice(0, at).trim()] = decodeURIComponent(entry.slice(at + 1).trim());
    } catch {
      throw new ConfigError(name, `the value of ${entry.slice(0, at).trim()} is not valid percent-encoding`);
    }
  }
  return headers;
}

export const ROLES = ['all', 'api', 'worker'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env = process.env) {
  const dataDir = path.resolve(str(env, 'DATA_DIR', './data'));
  const port = int(env, 'PORT', 3000, 0, 65535);
  const publicBaseUrl = (url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/$/, '');
  const jwtSecret = optional(env, 'JWT_SECRET');
  if (read(env, 'STT_STREAMING') === 'realtime' && read(env, 'REALTIME_BASE_URL') === undefined) {
    throw new ConfigError('STT_STREAMING', 'STT_STREAMING=realtime opens a Realtime transcription session per call: set REALTIME_BASE_URL');
  }
  if (read(env, 'TELEPHONY_PROVIDER') === 'twilio' && read(env, 'STT_BASE_URL') === undefined) {
    throw new ConfigError('STT_BASE_URL', 'TELEPHONY_PROVIDER=twilio carries real audio: set STT_BASE_URL (an OpenAI-compatible /audio/transcriptions API)');
  }
  if (read(env, 'TELEPHONY_PROVIDER') === 'twilio') {
    for (const name of ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN']) {
      if (read(env, name) === undefined) throw new ConfigError(name, 'TELEPHONY_PROVIDER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN');
    }
  }
  if (read(env, 'PAYMENTS_PROVIDER') === 'stripe') {
    for (const name of ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET']) {
      if (read(env, name) === undefined) throw new ConfigError(name, 'PAYMENTS_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET');
    }
  }
  const livekitSet = ['LIVEKIT_URL', 'LIVEKIT_API_KEY', 'LIVEKIT_API_SECRET'].filter((name) => read(env, name) !== undefined);
  if (livekitSet.length > 0 && livekitSet.length < 3) {
    const missing = ['LIVEKIT_URL', 'LIVEKIT_API_KEY', 'LIVEKIT_API_SECRET'].find((name) => !livekitSet.includes(name)) as string;
    throw new ConfigError(missing, 'LiveKit needs LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET together');
  }
  const twilioSid = optional(env, 'TWILIO_ACCOUNT_SID');
  if (twilioSid !== undefined && !/^AC[0-9a-fA-F]{32}$/.test(twilioSid)) throw new ConfigError('TWILIO_ACCOUNT_SID', 'must be AC followed by 32 hexadecimal digits');
  const contactEmail = optional(env, 'CONTACT_EMAIL');
  if (contactEmail !== undefined && !/^[^\s@]+@[^\s@]+$/.test(contactEmail)) throw new ConfigError('CONTACT_EMAIL', `expected an email address, got "${contactEmail}"`);
  if (jwtSecret !== undefined && jwtSecret.length < 32) {
    throw new ConfigError('JWT_SECRET', 'must be at least 32 characters');
  }
  return {
    port,
    host: str(env, 'HOST', '0.0.0.0'),
    dataDir,
    publicBaseUrl,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    role: oneOf(env, 'ROLE', ROLES, 'all'),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    /** Pretty lines on a terminal, JSON otherwise (`auto`); or always one of them. */
    logFormat: oneOf(env, 'LOG_FORMAT', ['auto', 'json', 'pretty'] as const, 'auto'),
    corsOrigins: csv(env, 'CORS_ORIGINS'),
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
    metricsToken: optional(env, 'METRICS_TOKEN'),
    /** OpenTelemetry tracing: on only when an OTLP endpoint is set (src/platform/telemetry/). */
    telemetry: {
      endpoint: url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']),
      tracesEndpoint: url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:']),
      headers: otlpHeaders(env, 'OTEL_EXPORTER_OTLP_HEADERS'),
      serviceName: str(env, 'OTEL_SERVICE_NAME', 'voice-agent-platform'),
      exportDelayMs: int(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 1, 600_000),
      exportTimeoutMs: int(env, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000, 1, 600_000),
      // OTLP/HTTP's default encoding is protobuf (the OpenTelemetry specification); JSON on request.
      protocol: oneOf(env, 'OTEL_EXPORTER_OTLP_PROTOCOL', ['http/protobuf', 'http/json'] as const, 'http/protobuf'),
      readsRatio: decimal(env, 'TRACE_READS_RATIO', 0.1, 0, 1),
    },
    auth: {
      /** Undefined means: generate once and keep it in DATA_DIR (see platform/auth/jwt-secret.ts). */
      jwtSecret,
      accessTokenTtlSeconds: int(env, 'ACCESS_TOKEN_TTL_SECONDS', 3600, 1, 86_400 * 30),
      refreshTokenTtlSeconds: int(env, 'REFRESH_TOKEN_TTL_SECONDS', 30 * 86_400, 60, 86_400 * 365),
      /** How long the gate keeps a verified credential (safety net: changes invalidate at once); 0 turns the cache off. */
      cacheTtlSeconds: int(env, 'AUTH_CACHE_TTL_SECONDS', 30, 0, 3600),
    },
    signupCreditUsd: decimal(env, 'SIGNUP_CREDIT_USD', 10, 0, 1_000_000),
    rateLimit: {
      userPerMin: int(env, 'RATE_LIMIT_USER_PER_MIN', 100, 1, 1_000_000),
      ipPerMin: int(env, 'RATE_LIMIT_IP_PER_MIN', 30, 1, 1_000_000),
      demoPerMin: int(env, 'RATE_LIMIT_DEMO_PER_MIN', 3, 1, 1_000_000),
    },
    webhooks: {
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      agentSchedule: schedule(env, 'WEBHOOK_RETRY_SCHEDULE', '0,1m,5m,30m,2h,6h,24h'),
      tenantSchedule: schedule(env, 'TENANT_WEBHOOK_RETRY_SCHEDULE', '0,1m,5m'),
      concurrency: int(env, 'WEBHOOK_CONCURRENCY', 64, 1, 256),
    },
    allowPrivateUrls: bool(env, 'ALLOW_PRIVATE_URLS', false),
    /** Cap on a sandbox call's virtual time against the wall (Infinity: `max`, as fast as the work allows). */
    sandboxSpeed: read(env, 'SANDBOX_SPEED')?.toLowerCase() === 'max' ? Number.POSITIVE_INFINITY : decimal(env, 'SANDBOX_SPEED', 20, 0.1, 10_000),
    calls: {
      /** A workspace's live-call limit unless its settings.max_concurrent_calls says otherwise. */
      maxConcurrent: int(env, 'MAX_CONCURRENT_CALLS', 10, 1, 1000),
      /**
       * CALLS_PER_PROCESS: the live calls this process runs, all workspaces together; the dialer
       * claims no more (CALL_WORKER_CAPACITY, its former name, is still read when it is unset).
       */
      perProcess: int(env, read(env, 'CALLS_PER_PROCESS') === undefined && read(env, 'CALL_WORKER_CAPACITY') !== undefined ? 'CALL_WORKER_CAPACITY' : 'CALLS_PER_PROCESS', 100, 1, 10_000),
      /** A live call's lease; renewed every third of it. A call whose process died ends when it runs out. */
      leaseMs: int(env, 'CALL_LEASE_SECONDS', 30, 1, 600) * 1000,
      /** After the call (recording, analysis, call.ended): attempt offsets from the first; the last one failing marks the step failed. */
      postCallSchedule: schedule(env, 'POST_CALL_RETRY_SCHEDULE', '0,10s,1m,5m,30m'),
      /** A post-call attempt's lease: past it (its worker died) any worker claims the call again. */
      postCallLeaseMs: int(env, 'POST_CALL_LEASE_SECONDS', 120, 1, 3600) * 1000,
      /** Post-call jobs this process runs at once. */
      postCallConcurrency: int(env, 'POST_CALL_CONCURRENCY', 4, 1, 256),
    },
    /** Where recordings go: DATA_DIR/blobs, or the database (several instances). */
    blobStore: oneOf(env, 'BLOB_STORE', ['fs', 'postgres'] as const, 'fs'),
    /** The rates of GET /v1/pricing, in USD. */
    pricing: {
      callPerMinUsd: decimal(env, 'PRICE_CALL_PER_MIN_USD', 0.09, 0, 100),
      webVoicePerMinUsd: decimal(env, 'PRICE_WEB_VOICE_PER_MIN_USD', 0.05, 0, 100),
      phoneNumberMonthlyUsd: decimal(env, 'PRICE_PHONE_NUMBER_MONTHLY_USD', 1.15, 0, 1000),
    },
    telephonyProvider: oneOf(env, 'TELEPHONY_PROVIDER', ['sandbox', 'twilio'] as const, 'sandbox'),
    twilio: {
      accountSid: twilioSid,
      authToken: optional(env, 'TWILIO_AUTH_TOKEN'),
      /** The REST root: a regional edge, or a local fake. */
      apiBaseUrl: (url(env, 'TWILIO_API_BASE_URL', ['http:', 'https:']) ?? 'https://api.twilio.com').replace(/\/$/, ''),
    },
    paymentsProvider: oneOf(env, 'PAYMENTS_PROVIDER', ['sandbox', 'stripe'] as const, 'sandbox'),
    stripe: {
      secretKey: optional(env, 'STRIPE_SECRET_KEY'),
      webhookSecret: optional(env, 'STRIPE_WEBHOOK_SECRET'),
      /** The REST root (a local fake in tests). */
      apiBaseUrl: url(env, 'STRIPE_API_BASE_URL', ['http:', 'https:']),
      /** The publishable key (`pk_…`) the dashboard's Stripe.js confirms top-ups with. */
      publishableKey: publishableKey(env),
      /** Where the dashboard loads Stripe.js from (a local fake in tests); its origin is allowed by the dashboard's CSP. */
      jsUrl: url(env, 'STRIPE_JS_URL', ['http:', 'https:']) ?? 'https://js.stripe.com/v3/',
    },
    llm: {
      baseUrl: url(env, 'LLM_BASE_URL', ['http:', 'https:']),
      apiKey: optional(env, 'LLM_API_KEY'),
      model: str(env, 'LLM_MODEL', 'gpt-4o-mini'),
    },
    /** Speech-to-speech agents (llm.provider "openai-realtime") and streaming recognition: an OpenAI Realtime API. */
    realtime: {
      baseUrl: url(env, 'REALTIME_BASE_URL', ['http:', 'https:']),
      apiKey: optional(env, 'REALTIME_API_KEY'),
      model: str(env, 'REALTIME_MODEL', 'gpt-realtime'),
      transcriptionModel: str(env, 'REALTIME_TRANSCRIPTION_MODEL', 'gpt-4o-transcribe'),
      connectTimeoutMs: int(env, 'REALTIME_CONNECT_TIMEOUT_MS', 10_000, 100, 120_000),
    },
    embeddings: {
      baseUrl: url(env, 'EMBEDDINGS_BASE_URL', ['http:', 'https:']),
      apiKey: optional(env, 'EMBEDDINGS_API_KEY'),
      model: str(env, 'EMBEDDINGS_MODEL', 'text-embedding-3-small'),
    },
    stt: {
      baseUrl: url(env, 'STT_BASE_URL', ['http:', 'https:']),
      apiKey: optional(env, 'STT_API_KEY'),
      model: str(env, 'STT_MODEL', 'whisper-1'),
      timeoutMs: int(env, 'STT_TIMEOUT_MS', 10_000, 100, 120_000),
      /** `realtime`: one streaming recognition session per call over REALTIME_BASE_URL; `off`: a request per utterance. */
      streaming: oneOf(env, 'STT_STREAMING', ['off', 'realtime'] as const, 'off'),
      /** A caller's pause after which their words are transcribed before their turn ends (0: off). */
      earlyTranscriptMs: int(env, 'STT_EARLY_TRANSCRIPT_MS', 250, 0, 5000),
    },
    tts: {
      baseUrl: url(env, 'TTS_BASE_URL', ['http:', 'https:']),
      apiKey: optional(env, 'TTS_API_KEY'),
      model: str(env, 'TTS_MODEL', 'tts-1'),
      voices: csv(env, 'TTS_VOICES'),
    },
    /** How long a voice session's media token lets a client connect. */
    mediaTokenTtlSeconds: int(env, 'MEDIA_TOKEN_TTL_SECONDS', 900, 30, 86_400),
    /**
     * How far ahead of its time an agent frame is handed to the media writer's thread, which writes
     * the built-in media sockets (0: no thread, frames are written on the event loop when due).
     */
    mediaLeadMs: int(env, 'MEDIA_LEAD_MS', 100, 0, 1000),
    livekit: {
      url: url(env, 'LIVEKIT_URL', ['ws:', 'wss:', 'http:', 'https:']),
      apiKey: optional(env, 'LIVEKIT_API_KEY'),
      apiSecret: optional(env, 'LIVEKIT_API_SECRET'),
      /** Whether the platform's agent joins each session's room (false: rooms and tokens only; your own agent joins). */
      agentJoins: bool(env, 'LIVEKIT_AGENT_JOIN', true),
    },
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: str(env, 'MAIL_FROM', 'Voice Agent Platform <no-reply@localhost>'),
    /** Where POST /v1/contact messages are mailed; unset: they are only stored. */
    contactEmail,
    /** The demo workspace's wallet is brought up to this at each start-up (POST /v1/demo/call spends it). */
    demoCreditUsd: decimal(env, 'DEMO_CREDIT_USD', 5, 0, 1_000_000),
  };
}

export type Config = ReturnType<typeof loadConfig>;
