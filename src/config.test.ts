import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, parseSchedule } from './config.ts';
import { createTelemetry, tracesUrl } from './platform/telemetry/telemetry.ts';

describe('config', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.auth.accessTokenTtlSeconds, 3600);
    assert.equal(config.signupCreditUsd, 10);
    assert.deepEqual(config.rateLimit, { userPerMin: 100, ipPerMin: 30, demoPerMin: 3 });
    assert.equal(config.webhooks.timeoutMs, 10_000);
    assert.deepEqual(config.webhooks.agentSchedule, [0, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 86_400_000]);
    assert.deepEqual(config.webhooks.tenantSchedule, [0, 60_000, 300_000]);
    assert.equal(config.allowPrivateUrls, false);
    assert.equal(config.role, 'all');
    assert.equal(config.databaseUrl, undefined);
  });

  it('reads TRUST_PROXY as a boolean, a hop count or a list of addresses', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy, ['10.0.0.0/8', '127.0.0.1']);
  });

  it('parses retry schedules as offsets from the first attempt', () => {
    assert.deepEqual(parseSchedule('X', '1s,2s'), [1000, 2000]);
    assert.deepEqual(parseSchedule('X', '0,500ms,1m,2h'), [0, 500, 60_000, 7_200_000]);
    assert.throws(() => parseSchedule('X', '5s,1s'), /must not decrease/);
  });

  const bad: Array<[string, string, RegExp]> = [
    ['PORT', 'abc', /^PORT: expected an integer/],
    ['PORT', '70000', /^PORT: must be between/],
    ['ROLE', 'boss', /^ROLE: expected one of all, api, worker/],
    ['ALLOW_PRIVATE_URLS', 'maybe', /^ALLOW_PRIVATE_URLS: expected true or false/],
    ['DATABASE_URL', 'mysql://x', /^DATABASE_URL: expected a postgres: or postgresql: URL/],
    ['WEBHOOK_RETRY_SCHEDULE', '1s,soon', /^WEBHOOK_RETRY_SCHEDULE: expected durations/],
    ['JWT_SECRET', 'short', /^JWT_SECRET: must be at least 32 characters/],
    ['SIGNUP_CREDIT_USD', 'ten', /^SIGNUP_CREDIT_USD: expected a number/],
    ['TRUST_PROXY', 'the load balancer', /^TRUST_PROXY: expected true, false, a hop count/],
    ['TWILIO_ACCOUNT_SID', 'my-account', /^TWILIO_ACCOUNT_SID: must be AC followed by 32 hexadecimal digits/],
    ['TWILIO_API_BASE_URL', 'ftp://api.twilio.com', /^TWILIO_API_BASE_URL: expected a http: or https: URL/],
    ['MEDIA_TOKEN_TTL_SECONDS', '5', /^MEDIA_TOKEN_TTL_SECONDS: must be between 30 and 86400/],
  ];

  it('LiveKit needs its URL, key and secret together', () => {
    assert.throws(() => loadConfig({ LIVEKIT_URL: 'wss://lk.example.com' }), (error: unknown) => error instanceof ConfigError && error.variable === 'LIVEKIT_API_KEY');
    assert.throws(() => loadConfig({ LIVEKIT_API_KEY: 'k', LIVEKIT_API_SECRET: 's' }), (error: unknown) => error instanceof ConfigError && error.variable === 'LIVEKIT_URL');
    assert.equal(loadConfig({ LIVEKIT_URL: 'wss://lk.example.com', LIVEKIT_API_KEY: 'k', LIVEKIT_API_SECRET: 's' }).livekit.agentJoins, true);
  });

  it('PAYMENTS_PROVIDER=stripe needs the secret key and the webhook secret', () => {
    for (const missing of ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET']) {
      const env: Record<string, string> = { PAYMENTS_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_1', STRIPE_WEBHOOK_SECRET: 'whsec_1' };
      delete env[missing];
      assert.throws(() => loadConfig(env), (error: unknown) => error instanceof ConfigError && error.variable === missing);
    }
    const config = loadConfig({ PAYMENTS_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_1', STRIPE_WEBHOOK_SECRET: 'whsec_1', STRIPE_API_BASE_URL: 'http://127.0.0.1:12111' });
    assert.deepEqual(config.stripe, { secretKey: 'sk_test_1', webhookSecret: 'whsec_1', apiBaseUrl: 'http://127.0.0.1:12111', publishableKey: undefined, jsUrl: 'https://js.stripe.com/v3/' });
  });

  it("the dashboard's Stripe.js: STRIPE_PUBLISHABLE_KEY must be a pk_ key, STRIPE_JS_URL an http(s) URL", () => {
    const config = loadConfig({ STRIPE_PUBLISHABLE_KEY: 'pk_test_abc123', STRIPE_JS_URL: 'http://127.0.0.1:12111/v3/' });
    assert.deepEqual([config.stripe.publishableKey, config.stripe.jsUrl], ['pk_test_abc123', 'http://127.0.0.1:12111/v3/']);
    for (const [variable, value] of [['STRIPE_PUBLISHABLE_KEY', 'sk_test_abc123'], ['STRIPE_JS_URL', 'javascript:alert(1)']]) {
      assert.throws(() => loadConfig({ [variable]: value }), (error: unknown) => error instanceof ConfigError && error.variable === variable);
    }
  });

  it('speech-to-speech and streaming recognition: REALTIME_* with defaults; STT_STREAMING=realtime needs REALTIME_BASE_URL', () => {
    const defaults = loadConfig({});
    assert.deepEqual([defaults.realtime.baseUrl, defaults.realtime.model, defaults.realtime.transcriptionModel, defaults.realtime.connectTimeoutMs, defaults.stt.streaming], [undefined, 'gpt-realtime', 'gpt-4o-transcribe', 10_000, 'off']);
    const set = loadConfig({ REALTIME_BASE_URL: 'http://10.0.0.5:8000/v1', REALTIME_API_KEY: 'sk-x', REALTIME_MODEL: 'mine', STT_STREAMING: 'realtime' });
    assert.deepEqual([set.realtime.baseUrl, set.realtime.apiKey, set.realtime.model, set.stt.streaming], ['http://10.0.0.5:8000/v1', 'sk-x', 'mine', 'realtime']);
    assert.throws(() => loadConfig({ STT_STREAMING: 'realtime' }), (error: unknown) => error instanceof ConfigError && error.variable === 'STT_STREAMING');
    for (const [variable, value] of [['STT_STREAMING', 'whisper'], ['REALTIME_BASE_URL', 'ftp://x'], ['REALTIME_CONNECT_TIMEOUT_MS', '5']]) {
      assert.throws(() => loadConfig({ [variable]: value }), (error: unknown) => error instanceof ConfigError && error.variable === variable, `${variable}=${value}`);
    }
  });

  it('TELEPHONY_PROVIDER=twilio needs the account SID and auth token', () => {
    const base = { TELEPHONY_PROVIDER: 'twilio', STT_BASE_URL: 'http://127.0.0.1:9/v1' };
    for (const missing of ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN']) {
      const env: Record<string, string> = { ...base, TWILIO_ACCOUNT_SID: `AC${'1'.repeat(32)}`, TWILIO_AUTH_TOKEN: 'token' };
      delete env[missing];
      assert.throws(() => loadConfig(env), (error: unknown) => error instanceof ConfigError && error.variable === missing);
    }
    const config = loadConfig({ ...base, TWILIO_ACCOUNT_SID: `AC${'1'.repeat(32)}`, TWILIO_AUTH_TOKEN: 'token', TWILIO_API_BASE_URL: 'http://127.0.0.1:9/' });
    assert.deepEqual(config.twilio, { accountSid: `AC${'1'.repeat(32)}`, authToken: 'token', apiBaseUrl: 'http://127.0.0.1:9' });
    assert.equal(loadConfig({}).twilio.apiBaseUrl, 'https://api.twilio.com');
  });
  for (const [name, value, message] of bad) {
    it(`refuses ${name}=${value} naming the variable`, () => {
      assert.throws(() => loadConfig({ [name]: value }), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.variable, name);
        assert.match(error.message, message);
        return true;
      });
    });
  }

  it('stops start-up with one line naming the variable', () => {
    const root = path.resolve(import.meta.dirname, '..');
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: root,
      env: { ...process.env, PORT: 'not-a-port', DATA_DIR: path.join(root, '.never-created') },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(result.status, 1);
    const lines = result.stderr.trim().split('\n');
    assert.deepEqual(lines, ['configuration error: PORT: expected an integer, got "not-a-port"']);
  });

  it('tracing: off without an endpoint (no tracer), the traces URL and the OTLP headers parsed as the specification writes them', async () => {
    const off = loadConfig({}).telemetry;
    assert.equal(tracesUrl(off), undefined);
    assert.equal((await createTelemetry(off)).tracer, undefined);
    const on = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://api.honeycomb.io/', OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=abc%3D1, x-other = two' }).telemetry;
    assert.equal(tracesUrl(on), 'https://api.honeycomb.io/v1/traces');
    assert.deepEqual(on.headers, { 'x-honeycomb-team': 'abc=1', 'x-other': 'two' });
    assert.equal(on.serviceName, 'voice-agent-platform');
    assert.equal(tracesUrl(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://tempo:4318/otlp/v1/traces' }).telemetry), 'http://tempo:4318/otlp/v1/traces');
    assert.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'no-equals-sign' }), (error: unknown) => error instanceof ConfigError && error.variable === 'OTEL_EXPORTER_OTLP_HEADERS');
    assert.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' }), ConfigError);
    assert.equal(on.protocol, 'http/protobuf', 'OTLP/HTTP protobuf by default');
    assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).telemetry.protocol, 'http/json');
    assert.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), (error: unknown) => error instanceof ConfigError && error.variable === 'OTEL_EXPORTER_OTLP_PROTOCOL');
    assert.equal(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat, 'pretty');
    assert.equal(loadConfig({}).logFormat, 'auto');
  });
});
