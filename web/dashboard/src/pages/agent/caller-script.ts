import type { CreateOutboundCallBody } from '../../../../../sdks/typescript/src/index.ts';

// The test panel's caller script: one utterance per line; a line starting with "[1500]" is said
// 1500 simulated ms after the agent starts its turn (a barge-in).

export type CallerUtterance = NonNullable<NonNullable<CreateOutboundCallBody['simulation']>['caller_script']>[number];

export function callerScriptOf(text: string): CallerUtterance[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const barge = /^\[(\d+)\]\s*(.+)$/.exec(line);
      return barge ? { text: barge[2], interrupt_after_ms: Number(barge[1]) } : line;
    });
}
