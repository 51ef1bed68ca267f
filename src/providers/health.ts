import type { EngineHealth, MediaHealth, Providers } from '../ports/providers.ts';

// Which telephony, speech-to-text and text-to-speech engines this deployment runs, and whether the
// real ones answer: said in the start-up log, and by GET /v1/media/health with the voice issue.
// Each remote check is one small request with a time-out; nothing here runs on a call's path.

export interface HealthInputs {
  providers: Providers;
  config: { stt: { baseUrl?: string; apiKey?: string } };
  timeoutMs?: number;
}

async function timed(check: () => Promise<unknown>): Promise<{ ok: boolean; latencyMs: number; detail?: string }> {
  const started = performance.now();
  try {
    await check();
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    return { ok: false, latencyMs: Math.round(performance.now() - started), detail: error instanceof Error ? error.message : String(error) };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** Any HTTP answer proves the server is there (an OpenAI-compatible server lists its models at /models). */
async function httpAnswers(url: string, apiKey: string | undefined, timeoutMs: number): Promise<void> {
  const response = await fetch(url, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {}, signal: AbortSignal.timeout(timeoutMs) });
  await response.body?.cancel();
  if (response.status >= 500) throw new Error(`HTTP ${response.status}`);
}

export async function checkMediaHealth(inputs: HealthInputs): Promise<MediaHealth> {
  const { providers, config } = inputs;
  const timeoutMs = inputs.timeoutMs ?? 5000;
  const telephony = providers.telephony;

  const telephonyCheck = async (): Promise<EngineHealth> => {
    const probe = telephony.probe?.bind(telephony);
    if (telephony.simulated || !probe) return { provider: telephony.name, real: false, reachable: null, latency_ms: null };
    const result = await timed(() => withTimeout(probe(), timeoutMs));
    return { provider: telephony.name, real: true, reachable: result.ok, latency_ms: result.latencyMs, ...(result.detail ? { detail: result.detail } : {}) };
  };

  const sttCheck = async (): Promise<EngineHealth> => {
    const baseUrl = config.stt.baseUrl;
    if (!baseUrl) return { provider: 'passthrough', real: false, reachable: null, latency_ms: null, detail: 'the sandbox passes its callers\u2019 text through' };
    const result = await timed(() => httpAnswers(`${baseUrl.replace(/\/$/, '')}/models`, config.stt.apiKey, timeoutMs));
    return { provider: 'openai-compatible', real: true, reachable: result.ok, latency_ms: result.latencyMs, ...(result.detail ? { detail: result.detail } : {}) };
  };

  const [telephonyHealth, stt, tts] = await Promise.all([telephonyCheck(), sttCheck(), providers.tts.describe()]);
  return { telephony: telephonyHealth, stt, tts };
}

/** One start-up line: engines and reachability, e.g. "telephony twilio (reachable, 84 ms) · stt … · tts …". */
export function describeMediaHealth(health: MediaHealth): string {
  const engine = (label: string, e: EngineHealth) =>
    `${label} ${e.provider}${e.real ? ` (${e.reachable ? `reachable, ${e.latency_ms} ms` : `NOT reachable${e.detail ? `: ${e.detail}` : ''}`})` : ' (simulated)'}`;
  const tts = `tts built-in voices via ${health.tts.builtin_engine}${health.tts.providers.length > 1 ? ` + ${health.tts.providers.filter((p) => p.name !== 'builtin').map((p) => p.name).join(', ')}` : ''}`;
  return [engine('telephony', health.telephony), engine('stt', health.stt), tts].join(' · ');
}
