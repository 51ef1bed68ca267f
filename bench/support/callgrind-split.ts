import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

// Splits one callgrind dump (a single event, Ir) into what the program did and what V8 did on the
// side: compiling (TurboFan's jobs, lazy bytecode compilation), deoptimising, and the old
// generation's collector (mark-compact and the sweeping it leaves). Those come in lumps that fall
// in one window or another (bench/README.md, "Tracing cost counted in instructions"); what is left
// — the requests' own code, the builtins and runtime they call, their young-generation collections
// (scavenges: paid in proportion to what a request allocates) — repeats from window to window.
//
// The dump holds each function's own cost and, per call edge, the inclusive cost of that call. A
// side is its entry points and every function nearly all of whose cost (95 %) comes from calls made
// inside the side (a helper the program also calls now and then for little stays in it; so does a
// cycle of functions calling each other, the marking visitor's, fed from inside); its cost
// is the own cost of those functions. Own costs, not the inclusive cost of the calls into the
// entry points: callgrind loses track of some returns through V8's trampolines and then books the
// program's code under a collector task, which an inclusive cost would take away with it.

/** Entry points of each side, by the start of their symbol (a class's name and `::`: any of its methods). */
const SIDES = {
  compile: ['v8::internal::compiler::PipelineCompilationJob::ExecuteJobImpl(', 'v8::internal::compiler::PipelineCompilationJob::FinalizeJobImpl(', 'v8::internal::Runtime_CompileLazy('],
  deoptimize: ['v8::internal::Runtime_NotifyDeoptimized('],
  // The old generation's cycle: incremental marking steps (run as tasks or on allocation), the
  // atomic mark-compact, the sweeping after it.
  full_gc: [
    'v8::internal::Heap::StartIncrementalMarking(',
    'v8::internal::Heap::FinalizeIncrementalMarkingIfComplete(',
    'v8::internal::IncrementalMarking::',
    'v8::internal::IncrementalMarkingJob::',
    'v8::internal::Heap::MarkCompact(',
    'v8::internal::MarkCompactCollector::',
    'v8::internal::Heap::EnsureSweepingCompleted(',
    'v8::internal::Sweeper::',
    // Compaction's parallel jobs, entered through the platform's job runner (the scavenger's too).
    'v8::internal::PageEvacuationJob::',
    'v8::internal::PointersUpdatingJob::',
    'v8::internal::Evacuator::',
    'v8::internal::FullEvacuator::',
  ],
} as const;
export type Side = keyof typeof SIDES;

export interface CallgrindSplit {
  total: number;
  /** The total less every side. */
  program: number;
  sides: Record<Side, number>;
}

/** Reads a callgrind dump of one event (Ir) and splits its total. */
export function splitCallgrindDump(file: string): CallgrindSplit {
  const names = new Map<string, string>();
  const own = new Map<string, number>(); // function → its own cost
  const edges = new Map<string, Map<string, number>>(); // callee → caller → inclusive cost of the calls
  let total = 0;
  let fn = '';
  let callee = '';
  let callCost = false;
  const named = (spec: string) => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(spec);
    if (!match) return spec;
    if (match[2] !== undefined) names.set(match[1], match[2]);
    return match[1];
  };
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('fn=')) fn = named(line.slice(3));
    else if (line.startsWith('cfn=')) callee = named(line.slice(4));
    else if (line.startsWith('calls=')) callCost = true;
    else if (line.startsWith('totals:')) total = Number(line.slice(7));
    else if (/^[+\-*0-9]/.test(line)) {
      const cost = Number(line.split(' ')[1] ?? 0);
      if (!callCost) {
        own.set(fn, (own.get(fn) ?? 0) + cost);
        continue;
      }
      callCost = false;
      const callers = edges.get(callee) ?? new Map<string, number>();
      callers.set(fn, (callers.get(fn) ?? 0) + cost);
      edges.set(callee, callers);
    }
  }
  const sides: Record<Side, number> = { compile: 0, deoptimize: 0, full_gc: 0 };
  const counted = new Set<string>();
  // Side by side, in SIDES' order (the sweeping a deoptimisation forces is the deoptimisation's).
  for (const side of Object.keys(SIDES) as Side[]) {
    const entries = new Set([...names].filter(([, name]) => SIDES[side].some((entry) => name.startsWith(entry))).map(([id]) => id));
    // The largest such set (a cycle fed only from inside the side stays in it): start from every
    // function and drop, until none is left to drop, each that is not an entry point and takes
    // more than 5 % of its cost from calls made outside.
    const inside = new Set([...entries, ...edges.keys()]);
    for (let shrank = true; shrank; ) {
      shrank = false;
      for (const id of inside) {
        if (entries.has(id)) continue;
        let from = 0;
        let all = 0;
        for (const [caller, cost] of edges.get(id) ?? []) {
          if (caller === id) continue; // a recursive call says nothing of where the function is
          all += cost;
          if (inside.has(caller)) from += cost;
        }
        if (all === 0 || from < 0.95 * all) {
          inside.delete(id);
          shrank = true;
        }
      }
    }
    for (const id of inside) {
      if (counted.has(id)) continue;
      counted.add(id);
      sides[side] += own.get(id) ?? 0;
    }
  }
  const program = total - sides.compile - sides.deoptimize - sides.full_gc;
  return { total, program, sides };
}

// `node --import tsx bench/support/callgrind-split.ts <dump>...`: the split of each dump.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const file of process.argv.slice(2)) {
    const { total, program, sides } = splitCallgrindDump(file);
    const m = (n: number) => (n / 1e6).toFixed(1).padStart(8);
    console.log(`${file}: total ${m(total)} M · program ${m(program)} M · compile ${m(sides.compile)} · deoptimize ${m(sides.deoptimize)} · full gc ${m(sides.full_gc)}`);
  }
}
