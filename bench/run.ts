// `npm run bench`: runs every bench/*.bench.ts in turn, each in its own process (a benchmark
// owns its databases and servers, and one crashing does not stop the others). Each writes its
// JSON into bench/results/. Arguments filter by name: `npm run bench -- webhooks` (a benchmark's
// whole name runs it alone; part of a name runs every benchmark containing it).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const dir = import.meta.dirname;
const filters = process.argv.slice(2);
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  // A name that is a benchmark's whole name picks that one only (`calls` is not `calls-throughput`).
  .filter((f) => filters.length === 0 || filters.some((name) => (fs.existsSync(path.join(dir, `${name}.bench.ts`)) ? f === `${name}.bench.ts` : f.includes(name))))
  .sort();

if (files.length === 0) {
  console.error(`no bench/*.bench.ts file matches ${filters.join(', ')}`);
  process.exit(1);
}

const failed: string[] = [];
for (const file of files) {
  console.log(`\n=== ${file} ===`);
  const started = Date.now();
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, file)], { stdio: 'inherit', env: process.env });
  console.log(`=== ${file}: ${run.status === 0 ? 'ok' : `failed (${run.signal ?? run.status})`} in ${((Date.now() - started) / 1000).toFixed(1)} s ===`);
  if (run.status !== 0) failed.push(file);
}
if (failed.length > 0) {
  console.error(`\nfailed: ${failed.join(', ')}`);
  process.exit(1);
}
