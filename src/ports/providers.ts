// The ports a deployment provides, as one set: built once per app by src/providers/index.ts (the
// only file that names adapters) and handed to the modules as `platform.providers`.
import type { BlobStore } from './blobs.ts';
import type { RuntimeClock } from './clock.ts';
import type { SpeechModel, StreamingSpeechToText } from './speech-model.ts';
import type { EmbeddingsProvider } from './embeddings.ts';
import type { LLM } from './llm.ts';
import type { NumberInventory } from './number-inventory.ts';
import type { PaymentsProvider } from './payments.ts';
import type { RealtimeMediaProvider } from './realtime-media.ts';
import type { SpeechToText } from './stt.ts';
import type { CarrierWebhookDescription, TelephonyProvider } from './telephony.ts';
import type { TextToSpeech, TtsDescription, TtsRegistry } from './tts.ts';

export interface Providers {
  /** The LLM adapter for an agent's `llm` setting; one per provider and model, reused. */
  llmFor(llm: { provider: string; model: string }): LLM;
  /** Built-in voices plus configured TTS providers. */
  tts: TtsRegistry;
  /** Recordings and other large binaries. */
  blobs: BlobStore;
  /**
   * Places and answers calls: the sandbox (it simulates the callee) or a carrier (TELEPHONY_PROVIDER),
   * known to its consumers by its capability flags only.
   */
  telephony: TelephonyProvider;
  /** Every registered carrier's webhooks as the API declares them (the running one's answer: `telephony.webhooks`). */
  carrierWebhooks: readonly CarrierWebhookDescription[];
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
  /** Streaming recognition, one session per call (STT_STREAMING=realtime, REALTIME_BASE_URL); the batch `stt` otherwise. */
  streamingStt?: StreamingSpeechToText;
  /** A speech-to-speech model (REALTIME_BASE_URL) for agents whose llm.provider is openai-realtime; null when none is configured. */
  speechModelFor(model: string): SpeechModel | null;
  /** Turns texts into vectors for knowledge search (EMBEDDINGS_BASE_URL); none: full-text only. */
  embeddings?: EmbeddingsProvider;
  /** Which telephony, STT and TTS engines run, and whether the real ones answer (each check bounded by `timeoutMs`, 5 s by default). */
  mediaHealth(options?: { timeoutMs?: number }): Promise<MediaHealth>;
}

// Which engines run and whether they answer: said in the start-up log and by GET /v1/media/health.

export interface EngineHealth {
  /** `sandbox`, `twilio`, `openai-compatible`, `passthrough` … */
  provider: string;
  /** Real (talks to something outside this process) or simulated. */
  real: boolean;
  /** For real engines: whether the endpoint answered the check; null when there is nothing to reach. */
  reachable: boolean | null;
  latency_ms: number | null;
  detail?: string;
}

export interface MediaHealth {
  telephony: EngineHealth;
  stt: EngineHealth;
  tts: TtsDescription;
}
