// Summaries of V8 CPU profiles for the benchmarks.

/** The heaviest functions of a CPU profile by self time, as shares of all samples. */
export function topCosts(profile: { nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }> }, count = 12) {
  const total = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? `${url.replace(/^.*\/node_modules\//, '').replace(/^.*\/src\//, 'src/').replace(/^file:\/\//, '')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + (node.hitCount ?? 0));
  }
  return [...byFunction.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([fn, hits]) => ({ fn, self_percent: Math.round((hits / total) * 1000) / 10 }));
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  hitCount?: number;
  children?: number[];
}

/**
 * The share of a CPU profile's busy samples (all but `(idle)`) spent in code that `inside` names by
 * its script URL. A sample belongs to the nearest frame of its stack that has a script of its own
 * (V8's builtins and Node's internals, such as JSON.stringify or a timer, belong to the script
 * that called them); so a hook's `done()`, which runs the rest of the request, is not the hook's.
 * The garbage collector's share is apart: no stack owns it.
 */
export function insideShare(profile: { nodes: ProfileNode[] }, inside: (url: string) => boolean) {
  const parentOf = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node);
  const hasScript = (url: string) => url !== '' && !url.startsWith('node:');
  const owner = (node: ProfileNode): ProfileNode | undefined => {
    let current: ProfileNode | undefined = node;
    while (current && !hasScript(current.callFrame.url)) current = parentOf.get(current.id);
    return current;
  };
  let busy = 0;
  let matched = 0;
  let gc = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0 || node.callFrame.functionName === '(idle)') continue;
    busy += hits;
    if (node.callFrame.functionName === '(garbage collector)') gc += hits;
    else {
      const script = owner(node);
      if (script && inside(script.callFrame.url)) matched += hits;
    }
  }
  const percent = (n: number) => Math.round((n / Math.max(1, busy)) * 10000) / 100;
  return { busy_samples: busy, inside_percent: percent(matched), gc_percent: percent(gc) };
}

/** A V8 CPU profile with its samples (the node of each sample, in order). */
export interface SampledProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  samples: number[];
}

/** Where a frame's code lives: a package, node's own code, the wasm of PGlite, or our source file. */
function placeOf(url: string): string {
  if (url.includes('node_modules/')) {
    const tail = url.slice(url.lastIndexOf('node_modules/') + 13).split('/');
    return tail[0].startsWith('@') ? `${tail[0]}/${tail[1]}` : tail[0];
  }
  if (url.startsWith('wasm://')) return 'wasm (PGlite)';
  if (url.startsWith('node:')) return 'node';
  if (url === '') return 'native / GC / idle';
  return url.replace(/^.*\/(src|bench)\//, '$1/');
}

type Frame = SampledProfile['nodes'][number]['callFrame'];

/** Each sample counted under `keyOf` its frame: the `top` keys, largest share first. */
function selfTimeBy(profile: SampledProfile, keyOf: (frame: Frame) => string, top: number) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const counts = new Map<string, number>();
  for (const id of profile.samples) {
    const frame = byId.get(id)?.callFrame;
    if (frame) counts.set(keyOf(frame), (counts.get(keyOf(frame)) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, n]) => ({ key, share: `${((n / profile.samples.length) * 100).toFixed(1)} %` }));
}

/** Self time by place (package or file), the largest first. */
export function selfTimeByPlace(profile: SampledProfile, top = 12) {
  const rows = selfTimeBy(profile, (frame) => (frame.functionName === '(idle)' ? 'idle' : placeOf(frame.url)), top);
  return rows.map(({ key, share }) => ({ place: key, share }));
}

/** Self time by package (or source file) and function, the largest first: where the time goes. */
export function selfTimeByFunction(profile: SampledProfile, top = 25) {
  const rows = selfTimeBy(profile, (frame) => {
    const where = frame.url.includes('node_modules/')
      ? frame.url.slice(frame.url.lastIndexOf('node_modules/') + 13).split('/').slice(0, frame.url.includes('node_modules/@') ? 2 : 1).join('/')
      : frame.url.replace(/^.*\/(src|bench)\//, '$1/');
    return `${frame.functionName || '(anonymous)'} ${where ? `(${where})` : ''}`;
  }, top);
  return rows.map(({ key, share }) => ({ frame: key, share }));
}
