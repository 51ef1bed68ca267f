import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import * as sdk from '@opentelemetry/sdk-trace-base';
import { loadConfig } from '../src/config.ts';
import { createPlatformSampler } from '../src/platform/telemetry/sampler.ts';

// The platform's sampler (src/platform/telemetry/sampler.ts): reads that start a trace are kept
// by ratio of their trace id; every other span is recorded; a child follows its parent.

const RECORD = sdk.SamplingDecision.RECORD_AND_SAMPLED;
/** 1,000 fixed trace ids, spread over the id space as random ones are (a fixed LCG). */
const traceIds = Array.from({ length: 1000 }, (_, i) => {
  let x = (i + 1) * 2654435761;
  let hex = '';
  for (let k = 0; k < 4; k++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    hex += x.toString(16).padStart(8, '0');
  }
  return hex;
});

function decisions(ratio: number, kind: SpanKind, method: string, parent = ROOT_CONTEXT) {
  const sampler = createPlatformSampler(sdk, ratio);
  return traceIds.map((id) => sampler.shouldSample(parent, id, 'span', kind, { 'http.request.method': method }, []).decision);
}
const kept = (list: sdk.SamplingDecision[]) => list.filter((d) => d === RECORD).length;

describe('the platform sampler', () => {
  it('keeps reads that start a trace by ratio: none at 0, all at 1, about a tenth at 0.1', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS']) {
      assert.equal(kept(decisions(0, SpanKind.SERVER, method)), 0, method);
      assert.equal(kept(decisions(1, SpanKind.SERVER, method)), 1000, method);
    }
    const tenth = kept(decisions(0.1, SpanKind.SERVER, 'GET'));
    assert.ok(tenth > 60 && tenth < 140, `${tenth} of 1,000 reads kept at 0.1`);
  });

  it('records every write, every span that is no request (calls, jobs) and every client span, whatever the ratio', () => {
    for (const method of ['POST', 'PATCH', 'PUT', 'DELETE']) assert.equal(kept(decisions(0, SpanKind.SERVER, method)), 1000, method);
    assert.equal(kept(decisions(0, SpanKind.INTERNAL, 'GET')), 1000, 'not a server span');
    assert.equal(kept(decisions(0, SpanKind.CONSUMER, '')), 1000, 'a job');
  });

  it("follows the parent's decision: a read in a sampled trace is kept, any span in an unsampled one is not", () => {
    const parent = (flags: number) => trace.setSpanContext(ROOT_CONTEXT, { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: flags, isRemote: true });
    assert.equal(kept(decisions(0, SpanKind.SERVER, 'GET', parent(1))), 1000);
    assert.equal(kept(decisions(1, SpanKind.SERVER, 'POST', parent(0))), 0);
  });

  it('reads TRACE_READS_RATIO: 0.1 by default, refused outside 0..1', () => {
    assert.equal(loadConfig({}).telemetry.readsRatio, 0.1);
    assert.equal(loadConfig({ TRACE_READS_RATIO: '1' }).telemetry.readsRatio, 1);
    assert.throws(() => loadConfig({ TRACE_READS_RATIO: '1.5' }), /TRACE_READS_RATIO/);
  });
});
