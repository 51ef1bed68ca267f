import { MPEGDecoder } from 'mpg123-decoder';

// What the call tests and the calls benchmark read off a finished sandbox call: its recording's
// decoded length, and the fields that must come out the same every time the same script runs.

/** The decoded length of an MP3, in milliseconds (mpg123 drops the encoder delay and padding the Info frame names). */
export async function decodedMs(mp3: Uint8Array): Promise<number> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  const { samplesDecoded, sampleRate } = decoder.decode(new Uint8Array(mp3));
  decoder.free();
  return (samplesDecoded / sampleRate) * 1000;
}

/** A call as `GET /v1/calls/{id}` answers it, the fields these checks read. */
export interface CallJson {
  id: string;
  status: string;
  end_reason: string;
  duration_ms: number;
  cost_usd: number;
  latency: unknown;
  transcript: Array<{ role: string; interrupted?: boolean; latency_ms?: number; timings?: unknown }>;
}

/** What must not change from one run of a scripted call to the next (virtual sandbox time). */
export function callSignature(call: CallJson) {
  const { transcript, duration_ms, cost_usd, latency, status, end_reason } = call;
  return { status, end_reason, transcript, duration_ms, cost_usd, latency };
}
