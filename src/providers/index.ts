import type { LLM } from '../ports/llm.ts';
import { createBlobStore } from '../platform/blobs/index.ts';
import type { BlobStore } from '../platform/blobs/port.ts';
import type { Clock } from '../platform/clock.ts';
import type { CpuPool } from '../platform/cpu-pool.ts';
import type { Database } from '../platform/db/schema.ts';
import { createLlm } from './llm/index.ts';
import { createTtsRegistryFromConfig, type TtsConfig, type TtsRegistry } from './tts/index.ts';
import { createRuntimeSpeech } from './tts/runtime-speech.ts';
import { createOpenAiStt } from './stt/openai.ts';
import type { NumberInventory } from '../ports/number-inventory.ts';
import type { PaymentsProvider } from '../ports/payments.ts';
import type { RealtimeMediaProvider } from '../ports/realtime-media.ts';
import { createLiveKitMedia } from './media/livekit.ts';
import { createSandboxPayments } from './payments/sandbox.ts';
import { createStripePayments } from './payments/stripe.ts';
import { createSandboxTelephony, type SandboxTelephony } from './telephony/sandbox.ts';
import { createSandboxInventory } from './telephony/sandbox-inventory.ts';
import { createTwilioTelephony, type TwilioTelephony } from './telephony/twilio.ts';
import { createTwilioClient } from './telephony/twilio-client.ts';
import { createTwilioInventory } from './telephony/twilio-inventory.ts';
import { createScaledClock } from '../runtime/clock.ts';
import { createVirtualClock } from '../runtime/virtual-clock.ts';
import type { RuntimeClock } from '../ports/clock.ts';
import type { SpeechToText } from '../ports/stt.ts';
import type { TextToSpeech } from '../ports/tts.ts';

// The adapters of this deployment, built once per app from configuration and handed to the
// modules (buildApp({providers}) replaces any of them, as tests and benchmarks do). Modules never
// build an adapter themselves.

export interface Providers {
  /** The LLM adapter for an agent's `llm` setting; one per provider and model, reused. */
  llmFor(llm: { provider: string; model: string }): LLM;
  /** Built-in voices plus configured TTS providers. */
  tts: TtsRegistry;
  /** Recordings and other large binaries. */
  blobs: BlobStore;
  /** Places and answers calls: the sandbox (it simulates the callee) or Twilio (TELEPHONY_PROVIDER). */
  telephony: SandboxTelephony | TwilioTelephony;
  /** The telephony provider's numbers: searched, bought, imported, released. */
  numbers: NumberInventory;
  /** The clock real calls run on (a sandbox call brings its own virtual clock: CallMedia.clock). */
  callClock: RuntimeClock;
  /** The clock of browser and app sessions (a person on the other end): real time. */
  mediaClock: RuntimeClock;
  /** Speech for live calls: the TTS providers at the runtime's 16 kHz, repeated lines cached. */
  speech: TextToSpeech;
  /** LiveKit rooms for voice sessions when LIVEKIT_* is set; otherwise the built-in media WebSocket. */
  realtime?: RealtimeMediaProvider;
  /** Charges wallet top-ups: the sandbox, or Stripe (PAYMENTS_PROVIDER). */
  payments: PaymentsProvider;
  /** The deployment's recogniser for real audio (STT_BASE_URL); the sandbox brings its own per call. */
  stt?: SpeechToText;
}

export interface ProviderInputs {
  config: {
    llm: { baseUrl?: string; apiKey?: string; model: string };
    tts: TtsConfig;
    blobStore: 'fs' | 'postgres';
    dataDir: string;
    sandboxSpeed: number;
    stt: { baseUrl?: string; apiKey?: string; model: string; timeoutMs: number };
    telephonyProvider: 'sandbox' | 'twilio';
    twilio: { accountSid?: string; authToken?: string; apiBaseUrl: string };
    publicBaseUrl: string;
    paymentsProvider: 'sandbox' | 'stripe';
    stripe: { secretKey?: string; webhookSecret?: string; apiBaseUrl?: string };
    livekit: { url?: string; apiKey?: string; apiSecret?: string };
  };
  clock: Clock;
  cpu: CpuPool;
  db: Database;
}

const MAX_CACHED_LLMS = 100;

export function createProviders(inputs: ProviderInputs, overrides: Partial<Providers> = {}): Providers {
  const { config, clock } = inputs;
  // An OpenAI client keeps its connections: one adapter per provider and model.
  const llms = new Map<string, LLM>();
  const llmFor = (llm: { provider: string; model: string }) => {
    const key = `${llm.provider}:${llm.model}`;
    let adapter = llms.get(key);
    if (!adapter) {
      adapter = llm.provider === 'openai' ? createLlm({ ...config.llm, model: llm.model }, { clock }) : createLlm({ model: llm.model }, { clock });
      if (llms.size < MAX_CACHED_LLMS) llms.set(key, adapter);
    }
    return adapter;
  };
  // Synthesis runs in the app's worker threads (a 300-letter preview is about a second of CPU).
  const tts = overrides.tts ?? createTtsRegistryFromConfig(config, { cpu: inputs.cpu });
  const speech = overrides.speech ?? createRuntimeSpeech(tts);
  const twilio = config.telephonyProvider === 'twilio';
  // Real calls run in real time; each sandbox call on a virtual clock of its own, capped at SANDBOX_SPEED.
  const callClock = overrides.callClock ?? createScaledClock(1);
  const newSandboxClock = () => createVirtualClock({ speed: config.sandboxSpeed });
  const telephony = overrides.telephony ?? (twilio ? createTwilio(config) : createSandboxTelephony({ newClock: newSandboxClock, tts: speech }));
  return {
    llmFor: overrides.llmFor ?? llmFor,
    tts,
    blobs: overrides.blobs ?? createBlobStore(config, inputs.db),
    speech,
    callClock,
    mediaClock: overrides.mediaClock ?? createScaledClock(1),
    telephony,
    numbers: overrides.numbers ?? (telephony.name === 'twilio' ? createTwilioInventory({ client: telephony.client, voiceUrl: telephony.urls.voice, statusUrl: telephony.urls.status }) : createSandboxInventory()),
    payments: overrides.payments ?? createPayments(config),
    realtime: overrides.realtime ?? createRealtime(config),
    stt: overrides.stt ?? (config.stt.baseUrl ? createOpenAiStt({ ...config.stt, baseUrl: config.stt.baseUrl }) : undefined),
  };
}

function createTwilio(config: ProviderInputs['config']): TwilioTelephony {
  const { accountSid, authToken, apiBaseUrl } = config.twilio;
  // config.ts refuses TELEPHONY_PROVIDER=twilio without both.
  if (!accountSid || !authToken) throw new Error('TELEPHONY_PROVIDER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN');
  return createTwilioTelephony({ client: createTwilioClient({ accountSid, authToken, apiBaseUrl }), publicBaseUrl: config.publicBaseUrl });
}

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
