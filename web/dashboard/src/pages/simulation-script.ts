import type { Campaign } from '../../../../sdks/typescript/src/index.ts';

// The sandbox simulation of a campaign or a schedule as its forms edit it: the callee's lines as
// text, one a line; written back with what the form does not show kept as it was (a line's
// barge-in time while its text is unchanged, the simulated latencies). Plain functions,
// unit-tested on Node.

export type Simulation = NonNullable<Campaign['simulation']>;
type Line = NonNullable<Simulation['caller_script']>[number];

export function scriptText(simulation: Simulation | null | undefined): string {
  return (simulation?.caller_script ?? []).map((line) => (typeof line === 'string' ? line : line.text)).join('\n');
}

/** The simulation for these lines (trimmed, non-empty); null when there is nothing to simulate. */
export function simulationOf(lines: string[], original: Simulation | null | undefined): Simulation | null {
  const before = original?.caller_script ?? [];
  const script: Line[] = lines.map((text, i) => {
    const was = before[i];
    return was !== undefined && typeof was !== 'string' && was.text === text ? was : text;
  });
  const latency = original?.latency;
  if (script.length === 0 && !latency) return null;
  return { ...(script.length > 0 ? { caller_script: script } : {}), ...(latency ? { latency } : {}) };
}
