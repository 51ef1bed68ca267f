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
