import { createCallsService } from '../../src/modules/calls/service.ts';
import type { CallRunner } from '../../src/modules/calls/runner.ts';
import type { CallRow } from '../../src/modules/calls/repo.ts';
import type { KnowledgeSearch } from '../../src/engine/types.ts';
import { createLlm } from '../../src/providers/llm/index.ts';
import { createSandboxTelephony } from '../../src/providers/telephony/sandbox.ts';
import { createTtsRegistry } from '../../src/providers/tts/index.ts';
import { createRuntimeSpeech } from '../../src/providers/tts/runtime-speech.ts';
import type { CallMedia, InboundRequest, TelephonyProvider } from '../../src/ports/telephony.ts';
import type { Providers } from '../../src/ports/providers.ts';
import { createVirtualClock } from '../../src/runtime/virtual-clock.ts';
import { journalRig } from './call-rows.ts';

// The calls service (src/modules/calls/service.ts) built as the calls module builds it, without an
// app: this file's real database, a manual clock, the real journal, the sandbox telephony (or a
// carrier's flags, for the outbound checks) and the built-in LLM for extraction. The runner is the
// one part stood in for: `runHere` holds the ids of the calls this process "runs" (its hangup and
// transfer answer true for them, as the real runner does for its live calls); every hangup,
// transfer and answer asked of it is recorded, and every inbound call asked of the sandbox.

export const LEASE_MS = 30_000;

export interface RunnerLog {
  hangups: string[];
  transfers: Array<[string, string]>;
  answered: Array<{ row: CallRow; media: CallMedia }>;
  /** What the service asked of the sandbox for each inbound call. */
  inbound: InboundRequest[];
}

export async function callsServiceRig() {
  const rig = await journalRig();
  const runHere = new Set<string>();
  const log: RunnerLog = { hangups: [], transfers: [], answered: [], inbound: [] };
  const runner = {
    holder: 'rig-holder',
    hangup(id: string) {
      log.hangups.push(id);
      return runHere.has(id);
    },
    transfer(id: string, to: string) {
      log.transfers.push([id, to]);
      return runHere.has(id);
    },
    answer(row: CallRow, media: CallMedia) {
      log.answered.push({ row, media });
      return Promise.resolve();
    },
  } as unknown as CallRunner;
  const simulated = createSandboxTelephony({ newClock: () => createVirtualClock({ speed: 1000 }), tts: createRuntimeSpeech(createTtsRegistry()) });
  const sandbox: TelephonyProvider = {
    ...simulated,
    acceptInbound(request: InboundRequest) {
      log.inbound.push(request);
      return simulated.acceptInbound(request);
    },
  };
  const carrier = { name: 'twilio', ownsCallerIds: true, inbound: false } as unknown as TelephonyProvider;
  const llm = createLlm({ model: 'builtin' }, { clock: rig.clock });
  const knowledge = { search: async () => [] } as unknown as KnowledgeSearch;
  let nudges = 0;
  const build = (telephony: TelephonyProvider) =>
    createCallsService({
      db: rig.db,
      clock: rig.clock,
      journal: rig.journal,
      runner,
      providers: { telephony, llmFor: () => llm } as unknown as Providers,
      knowledge,
      leaseMs: LEASE_MS,
      nudge: () => {
        nudges += 1;
      },
    });
  return { ...rig, service: build(sandbox), carrier: build(carrier), runHere, log, nudges: () => nudges };
}
