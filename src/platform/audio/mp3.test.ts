import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MPEGDecoder } from 'mpg123-decoder';
import { encodeMp3 } from './mp3.ts';

// An MP3 decodes to exactly the samples that were encoded: the Info frame (mp3-info-tag.ts) tells the
// decoder the encoder's delay and padding, which it drops. Without it a recording is 70-105 ms longer
// than its call at 16 kHz, and its audio starts late by the encoder's delay.

/** Silence, then a tone from `ONSET` on (from the middle when shorter). */
const ONSET = 3000;
const onsetOf = (samples: number) => (samples > 2 * ONSET ? ONSET : Math.floor(samples / 2));
function tone(samples: number): Int16Array {
  const pcm = new Int16Array(samples);
  for (let i = onsetOf(samples); i < samples; i++) pcm[i] = Math.round(8000 * Math.sin(i / 10));
  return pcm;
}

async function decode(mp3: Buffer) {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  const decoded = decoder.decode(new Uint8Array(mp3));
  decoder.free();
  return decoded;
}

describe('MP3 encoding', () => {
  for (const [sampleRate, samples] of [
    [16_000, 100],
    [16_000, 12_345],
    [16_000, 16_000 * 28 + 5_440],
    [8_000, 24_077],
    [24_000, 72_077],
    [44_100, 132_377],
  ]) {
    it(`decodes to exactly the ${samples} samples encoded at ${sampleRate} Hz`, async () => {
      const pcm = tone(samples);
      const decoded = await decode(await encodeMp3(pcm, sampleRate));
      assert.deepEqual(decoded.errors, []);
      assert.equal(decoded.sampleRate, sampleRate);
      assert.equal(decoded.samplesDecoded, samples);
      // The audio is where it was: the tone starts at the same sample (no leading delay).
      const onset = decoded.channelData[0].findIndex((v) => Math.abs(v) > 0.1);
      assert.ok(Math.abs(onset - onsetOf(samples)) <= 20, `the tone starts at ${onset}, encoded at ${onsetOf(samples)}`);
    });
  }

  it('starts with an Info frame naming LAME, the frame count and the delay', async () => {
    const mp3 = await encodeMp3(tone(16_000), 16_000);
    assert.equal(mp3.subarray(13, 17).toString('latin1'), 'Info');
    assert.equal(mp3.subarray(25, 34).toString('latin1'), 'LAME3.100');
    assert.equal(((mp3[25 + 21] << 4) | (mp3[25 + 22] >> 4)), 576);
  });
});
