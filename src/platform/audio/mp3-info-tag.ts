// The "Info" frame LAME puts before a constant-bitrate MP3's audio (the Xing header with LAME's
// extension): the number of frames, and the encoder's delay and padding. A decoder that reads it
// (mpg123, browsers, ffmpeg) drops that delay and padding, so the MP3 decodes to exactly the samples
// that were encoded: a call's recording is as long as the call. Our encoder (LAME 3.100 in
// WebAssembly, built for streaming) writes no such frame, so it is built here, from the first
// audio frame's header.

/** Samples per Layer III frame: 1152 for MPEG-1 (32 kHz and up), 576 for MPEG-2 and 2.5. */
export const samplesPerFrame = (sampleRate: number) => (sampleRate >= 32_000 ? 1152 : 576);

/** LAME's encoder delay in samples (ENCDELAY): the silence its first frame starts with. */
const ENCODER_DELAY = 576;

/**
 * An Info frame for `mp3` (the encoder's whole output, CBR, beginning with a frame header) that
 * holds `samples` samples of audio. Null when `mp3` does not start with a Layer III frame header.
 */
export function infoFrame(mp3: Uint8Array, samples: number, sampleRate: number): Uint8Array | null {
  if (mp3.length < 4 || mp3[0] !== 0xff || (mp3[1] & 0xe6) !== 0xe2) return null;
  const mpeg1 = (mp3[1] & 0x18) === 0x18;
  const mono = (mp3[3] & 0xc0) === 0xc0;
  const bitrateKbps = bitrateOf(mp3[2] >> 4, mpeg1);
  if (!bitrateKbps) return null;
  const spf = samplesPerFrame(sampleRate);
  // A frame's size at this bitrate: on average (padding slots fill the fraction), and without the slot.
  const averageSize = ((spf / 8) * bitrateKbps * 1000) / sampleRate;
  const size = Math.floor(averageSize);
  const frame = new Uint8Array(size);
  frame.set(mp3.subarray(0, 4));
  frame[2] &= ~0x02; // no padding slot
  frame[1] |= 0x01; // no CRC
  const sideInfo = mpeg1 ? (mono ? 17 : 32) : mono ? 9 : 17;
  let at = 4 + sideInfo;
  const view = new DataView(frame.buffer);
  const frames = Math.round(mp3.length / averageSize);
  const padding = Math.max(0, Math.min(0xfff, frames * spf - samples - ENCODER_DELAY));
  frame.set(ascii('Info'), at);
  view.setUint32(at + 4, 0x01, false); // flags: the frame count follows
  view.setUint32(at + 8, frames, false);
  at += 12;
  frame.set(ascii('LAME3.100'), at);
  frame[at + 9] = 0x01; // tag revision 0, constant bitrate
  // lowpass, peak, radio and audiophile gain, encoding flags: zero; then the bitrate.
  frame[at + 20] = Math.min(255, bitrateKbps);
  // Encoder delay and padding, 12 bits each.
  frame[at + 21] = ENCODER_DELAY >> 4;
  frame[at + 22] = ((ENCODER_DELAY & 0x0f) << 4) | (padding >> 8);
  frame[at + 23] = padding & 0xff;
  return frame;
}

const MPEG1_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG2_KBPS = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const bitrateOf = (index: number, mpeg1: boolean) => (mpeg1 ? MPEG1_KBPS : MPEG2_KBPS)[index] ?? 0;
const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
