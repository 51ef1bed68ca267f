import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { createRequestSampler } from '../src/platform/telemetry/sampler.ts';

// Which requests start a trace (src/platform/telemetry/sampler.ts): every write; a read by a draw
// against TRACE_READS_RATIO, made before any span exists. (A request with a traceparent follows its
// caller: test/tracing.test.ts drives that over HTTP.)

/** 1,000 draws spread evenly over [0, 1), so each ratio's count is exact. */
const draws = Array.from({ length: 1000 }, (_, i) => (i + 0.5) / 1000);
function kept(ratio: number, method: string) {
  let next = 0;
  const startsTrace = createRequestSampler(ratio, () => draws[next++]);
  return draws.filter(() => startsTrace(method)).length;
}

describe('which requests start a trace', () => {
  it('a read by its ratio: none at 0, all at 1, a tenth at 0.1', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS']) {
      assert.equal(kept(0, method), 0, method);
      assert.equal(kept(1, method), 1000, method);
      assert.equal(kept(0.1, method), 100, method);
    }
  });

  it('every write, whatever the ratio, and without drawing', () => {
    for (const method of ['POST', 'PATCH', 'PUT', 'DELETE']) {
      const startsTrace = createRequestSampler(0, () => assert.fail('a write needs no draw'));
      assert.equal(startsTrace(method), true, method);
    }
  });

  it('with Math.random by default: about a tenth of 10,000 reads at 0.1', () => {
    const startsTrace = createRequestSampler(0.1);
    const count = Array.from({ length: 10_000 }, () => startsTrace('GET')).filter(Boolean).length;
    assert.ok(count > 800 && count < 1200, `${count} of 10,000`);
  });

  it('reads TRACE_READS_RATIO: 0.1 by default, refused outside 0..1', () => {
    assert.equal(loadConfig({}).telemetry.readsRatio, 0.1);
    assert.equal(loadConfig({ TRACE_READS_RATIO: '1' }).telemetry.readsRatio, 1);
    assert.throws(() => loadConfig({ TRACE_READS_RATIO: '1.5' }), /TRACE_READS_RATIO/);
  });
});
