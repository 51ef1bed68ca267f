import { createBlobStore } from '../platform/blobs/index.ts';
import type { Clock } from '../platform/clock.ts';
import type { CpuPool } from '../platform/cpu-pool.ts';
import type { Database } from '../platform/db/schema.ts';
import type { RuntimeClock } from '../ports/clock.ts';
import type { EmbeddingsProvider } from '../ports/embeddings.ts';
import type { LLM } from '../ports/llm.ts';
import type { PaymentsProvider } from '../ports/payments.ts';
import type { Providers } from '../ports/providers.ts';
import type { RealtimeMediaProvider } from '../ports/realtime-media.ts';
import type { NumberInventory } from '../ports/number-inventory.ts';
import type { CarrierWebhookDescription, TelephonyProvider } from '../ports/telephony.ts';
import type { TextToSpeech } from '../ports/tts.ts';
import { createOpenAiEmbeddings } from './embeddings/openai.ts';
import { checkMediaHealth } from './health.ts';
import { createLlm } from './llm/index.ts';
import { createLiveKitMedia } from './media/livekit.ts';
import { createSandboxPayments } from './payments/sandbox.ts';
import { createStripePayments } from './payments/stripe.ts';
import { createOpenAiStt } from './stt/openai.ts';
import { createSandboxTelephony } from './telephony/sandbox.ts';
import { createSandboxInventory } from './telephony/sandbox-inventory.ts';
import { createTwilioClient } from './telephony/twilio/client.ts';
import { createTwilioInventory } from './telephony/twilio/inventory.ts';
import { createTwilioTelephony } from './telephony/twilio/telephony.ts';
import { TWILIO_WEBHOOKS } from './telephony/twilio/webhooks.ts';
import { createOpenAiRealtime } from './realtime/openai-realtime.ts';
import { createOpenAiRealtimeStt } from './realtime/openai-realtime-stt.ts';
import { createTtsRegistryFromConfig, type TtsConfig } from './tts/index.ts';
import { createRuntimeSpeech } from './tts/runtime-speech.ts';

// The adapters of this deployment, built once per app from configuration (by the composition root,
// src/app.ts) and handed to the modules as `platform.providers` (the ports in src/ports/providers.ts;
// buildApp({providers}) replaces any of them, as tests and benchmarks do). The only file that names
// adapters: modules never build one themselves.

/** Adapters replacing the configured ones (tests, benchmarks): any port. */
export type ProviderOverrides = Partial<Providers>;

export interface ProviderInputs {
  config: {
    llm: { baseUrl?: string; apiKey?: string; model: string };
    tts: TtsConfig;
    blobStore: 'fs' | 'postgres';
    dataDir: string;
    sandboxSpeed: number;
    stt: { baseUrl?: string; apiKey?: string; model: string; timeoutMs: number; streaming: 'off' | 'realtime' };
    telephonyProvider: 'sandbox' | 'twilio';
    twilio: { accountSid?: string; authToken?: string; apiBaseUrl: string };
    publicBaseUrl: string;
    paymentsProvider: 'sandbox' | 'stripe';
    stripe: { secretKey?: string; webhookSecret?: string; apiBaseUrl?: string };
    livekit: { url?: string; apiKey?: string; apiSecret?: string };
    realtime: { baseUrl?: string; apiKey?: string; model: string; transcriptionModel: string; connectTimeoutMs: number };
    embeddings: { baseUrl?: string; apiKey?: string; model: string };
  };
  clock: Clock;
  /** A new real-time clock (calls with a person on the other end), and a new sandbox call's clock. */
  clocks: { real(): RuntimeClock; sandbox(speed: number): RuntimeClock };
  cpu: CpuPool;
  db: Database;
}

const MAX_CACHED_LLMS = 100;

export function createProviders(inputs: ProviderInputs, overrides: ProviderOverrides = {}): Providers {
  const { config, clock } = inputs;
  // An OpenAI client keeps its connections: one adapter per provider and model.
  const llms = new Map<string, LLM>();
  const llmFor = (llm: { provider: string; model: string }) => {
    const key = `${llm.provider}:${llm.model}`;
    let adapter = llms.get(key);
    if (!adapter) {
      // A speech-to-speech agent's text (chat, widgets' chat, extraction) goes to the deployment's chat
      // model at its default LLM_MODEL (its own model speaks, it does not chat), else the built-in engine.
      if (llm.provider === 'openai') adapter = createLlm({ ...config.llm, model: llm.model }, { clock });
      else if (llm.provider === 'openai-realtime') adapter = createLlm(config.llm, { clock });
      else adapter = createLlm({ model: llm.model }, { clock });
      if (llms.size < MAX_CACHED_LLMS) llms.set(key, adapter);
    }
    return adapter;
  };
  // Synthesis runs in the app's worker threads (a 300-letter preview is about a second of CPU).
  const tts = overrides.tts ?? createTtsRegistryFromConfig(config, { cpu: inputs.cpu });
  const speech = overrides.speech ?? createRuntimeSpeech(tts);
  // Real calls run in real time; each sandbox call on a virtual clock of its own, capped at SANDBOX_SPEED.
  const callClock = overrides.callClock ?? inputs.clocks.real();
  // A speech-to-speech model is a real-time service: its sandbox calls run on a real-time clock.
  const newSandboxClock = (kind: 'virtual' | 'real' = 'virtual') => (kind === 'real' ? inputs.clocks.real() : inputs.clocks.sandbox(config.sandboxSpeed));
  const { realtime } = config;
  const speechModelFor = (model: string) =>
    realtime.baseUrl ? createOpenAiRealtime({ baseUrl: realtime.baseUrl, apiKey: realtime.apiKey, model: model.trim() || realtime.model, transcriptionModel: realtime.transcriptionModel, connectTimeoutMs: realtime.connectTimeoutMs }) : null;
  const carrier = overrides.telephony && overrides.numbers ? null : CARRIERS[config.telephonyProvider]({ config, newSandboxClock, speech });
  const telephony = overrides.telephony ?? (carrier as Carrier).telephony;
  let embeddingsAdapter: EmbeddingsProvider | undefined;
  const providers: Providers = {
    llmFor: overrides.llmFor ?? llmFor,
    tts,
    blobs: overrides.blobs ?? createBlobStore(config, inputs.db),
    speech,
    callClock,
    mediaClock: overrides.mediaClock ?? inputs.clocks.real(),
    telephony,
    carrierWebhooks: overrides.carrierWebhooks ?? CARRIER_WEBHOOKS,
    numbers: overrides.numbers ?? (carrier as Carrier).numbers,
    payments: overrides.payments ?? createPayments(config),
    realtime: overrides.realtime ?? createRealtime(config),
    stt: overrides.stt ?? (config.stt.baseUrl ? createOpenAiStt({ ...config.stt, baseUrl: config.stt.baseUrl }) : undefined),
    speechModelFor: overrides.speechModelFor ?? speechModelFor,
    streamingStt:
      overrides.streamingStt ??
      (config.stt.streaming === 'realtime' && realtime.baseUrl
        ? createOpenAiRealtimeStt({ baseUrl: realtime.baseUrl, apiKey: realtime.apiKey, model: realtime.transcriptionModel, connectTimeoutMs: realtime.connectTimeoutMs })
        : undefined),
    // Built on first use, as knowledge search asks for it (the SDK loads then, not at start-up).
    get embeddings() {
      if (overrides.embeddings) return overrides.embeddings;
      const { baseUrl, apiKey, model } = config.embeddings;
      embeddingsAdapter ??= baseUrl ? createOpenAiEmbeddings({ baseUrl, apiKey, model }) : undefined;
      return embeddingsAdapter;
    },
    mediaHealth: overrides.mediaHealth ?? ((options = {}) => checkMediaHealth({ providers, config, ...options })),
  };
  return providers;
}

/** A carrier's adapters: its telephony and the numbers it sells. */
interface Carrier {
  telephony: TelephonyProvider;
  numbers: NumberInventory;
}

interface CarrierInputs {
  config: ProviderInputs['config'];
  /** A new sandbox call's clock. */
  newSandboxClock(kind?: 'virtual' | 'real'): RuntimeClock;
  speech: TextToSpeech;
}

/**
 * The carriers a deployment can run (TELEPHONY_PROVIDER), each built from configuration. A new
 * carrier is an adapter folder under providers/telephony/ and its registration: an entry here, its
 * webhooks' description in CARRIER_WEBHOOKS, its settings in config.ts. The modules know it by its
 * capability flags and its webhooks' port only.
 */
const CARRIERS: Record<ProviderInputs['config']['telephonyProvider'], (inputs: CarrierInputs) => Carrier> = {
  sandbox: ({ newSandboxClock, speech }) => ({ telephony: createSandboxTelephony({ newClock: newSandboxClock, tts: speech }), numbers: createSandboxInventory() }),
  twilio: ({ config }) => {
    const { accountSid, authToken, apiBaseUrl } = config.twilio;
    // config.ts refuses TELEPHONY_PROVIDER=twilio without both.
    if (!accountSid || !authToken) throw new Error('TELEPHONY_PROVIDER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN');
    const telephony = createTwilioTelephony({ client: createTwilioClient({ accountSid, authToken, apiBaseUrl }), publicBaseUrl: config.publicBaseUrl });
    return { telephony, numbers: createTwilioInventory({ client: telephony.client, voiceUrl: telephony.urls.voice, statusUrl: telephony.urls.status }) };
  },
};

/** Every registered carrier's webhooks, declared by the API whichever carrier runs. */
const CARRIER_WEBHOOKS: readonly CarrierWebhookDescription[] = [TWILIO_WEBHOOKS];

function createPayments(config: ProviderInputs['config']): PaymentsProvider {
  const { secretKey, webhookSecret, apiBaseUrl } = config.stripe;
  if (config.paymentsProvider === 'sandbox') return createSandboxPayments();
  // config.ts refuses PAYMENTS_PROVIDER=stripe without both.
  if (!secretKey || !webhookSecret) throw new Error('PAYMENTS_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET');
  return createStripePayments({ secretKey, webhookSecret, apiBaseUrl });
}

function createRealtime(config: ProviderInputs['config']): RealtimeMediaProvider | undefined {
  const { url, apiKey, apiSecret } = config.livekit;
  // config.ts refuses a partial LiveKit configuration.
  return url && apiKey && apiSecret ? createLiveKitMedia({ url, apiKey, apiSecret }) : undefined;
}
