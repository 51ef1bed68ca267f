#!/usr/bin/env node
// Plants the mutants a Stryker run left alive again, one at a time, in the working tree, and runs
// the given test files against each: how a survivor is checked against a new test, or against a
// file too slow for the Stryker run's own list (docs/testing.md, "Mutation testing"). The files run
// as `node --import tsx --test` runs them (no run-tests.mjs around them: a second less a mutant).
//
//   node scripts/replant-survivors.mjs runtime/call-session [--ids 12,40] [--file pipeline/speech.ts] -- TEST_FILE…
//
// Reads reports/mutation/<part>.json (the part's name with `/` as `-`), takes its Survived and
// NoCoverage mutants (or the ids given), and for each writes the mutant into its source file, runs
// the files (TEST_PGLITE_TEMPLATE is reused when set), puts the file back, and prints CAUGHT (the
// tests failed or timed out) or ALIVE. A source file that changed since the run is skipped: its
// mutants' places are no longer known. An interrupted run stops its tests and puts the file back.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const split = args.indexOf('--');
const [part, ...options] = split < 0 ? args : args.slice(0, split);
const tests = split < 0 ? [] : args.slice(split + 1);
const option = (name) => {
  const at = options.indexOf(name);
  return at < 0 ? undefined : options[at + 1];
};
if (!part || tests.length === 0) {
  console.error('usage: node scripts/replant-survivors.mjs PART [--ids a,b] [--file NAME] -- TEST_FILE…');
  process.exit(2);
}
const ids = option('--ids')?.split(',');
const onlyFile = option('--file');
const timeoutMs = Number(process.env.REPLANT_TIMEOUT_MS ?? 120_000);

const report = JSON.parse(fs.readFileSync(path.join(root, 'reports', 'mutation', `${part.replace('/', '-')}.json`), 'utf8'));

/** The offset in `text` of a 1-based line and column. */
function offsetOf(text, { line, column }) {
  let at = 0;
  for (let l = 1; l < line; l++) at = text.indexOf('\n', at) + 1;
  return at + column - 1;
}

let planted = null;
let running = null;
/** Kills the test run and the per-file processes `node --test` started (its own process group): a mutant that loops forever would outlive its parent. */
const stopRunning = () => {
  if (!running) return;
  try {
    process.kill(-running.pid, 'SIGKILL');
  } catch {
    // already gone
  }
};
const restore = () => {
  if (planted) fs.writeFileSync(planted.file, planted.text);
  planted = null;
};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopRunning();
    restore();
    process.exit(130);
  });
}

/** Runs the test files; resolves with whether they failed (or ran past the timeout). */
function testsFail() {
  return new Promise((resolve) => {
    running = spawn(process.execPath, ['--import', 'tsx', '--no-warnings=ExperimentalWarning', '--test', '--test-concurrency=2', '--test-reporter=dot', ...tests], { cwd: root, stdio: 'ignore', detached: true });
    const timer = setTimeout(stopRunning, timeoutMs);
    running.on('exit', (code) => {
      clearTimeout(timer);
      running = null;
      resolve(code !== 0);
    });
  });
}

const counts = { caught: 0, alive: 0 };
for (const [name, entry] of Object.entries(report.files)) {
  if (onlyFile && !name.endsWith(onlyFile)) continue;
  const file = path.resolve(root, name);
  const text = fs.readFileSync(file, 'utf8');
  const wanted = entry.mutants.filter((m) => (ids ? ids.includes(String(m.id)) : m.status === 'Survived' || m.status === 'NoCoverage'));
  if (wanted.length === 0) continue;
  if (text !== entry.source) {
    console.log(`SKIPPED ${name}: changed since the run (${wanted.length} mutants)`);
    continue;
  }
  for (const mutant of wanted) {
    const start = offsetOf(text, mutant.location.start);
    const end = offsetOf(text, mutant.location.end);
    planted = { file, text };
    fs.writeFileSync(file, text.slice(0, start) + mutant.replacement + text.slice(end));
    const caught = await testsFail();
    restore();
    counts[caught ? 'caught' : 'alive'] += 1;
    const where = `${name}:${mutant.location.start.line}:${mutant.location.start.column}`;
    console.log(`${caught ? 'CAUGHT' : 'ALIVE '} ${mutant.id} ${where} ${mutant.mutatorName}: ${JSON.stringify(mutant.replacement).slice(0, 120)}`);
  }
}
console.log(`${counts.caught} caught, ${counts.alive} alive`);
