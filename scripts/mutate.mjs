#!/usr/bin/env node
// `npm run mutate [-- <folder> ...]`: mutation testing with StrykerJS (issue 27), one Stryker run
// per scoped folder, each against the test files that cover it (FOLDERS below). Not part of CI nor
// of `npm test`; see docs/testing.md "Mutation testing". `npm run mutate -- outbound auth` runs two
// folders; no argument runs them all, smallest first (hours). MUTATE_FOLDERS=outbound,auth works too.
// Each run's results are kept in test/mutation/ (committed): a later run redoes only what changed.
//
// Stryker's tap runner runs each test file as its own `node --import tsx <file>` (node:test writes
// TAP) and records which mutants each file reaches: a mutant then runs only the files that reach
// it, stopping at the first that fails. The `typescript` checker is not used: it drives the
// TypeScript JS API, which TypeScript 7 (ours, a native binary) no longer ships. `npm run mutate`
// itself runs under `nice -n 19`, one mutant at a time (MUTATE_CONCURRENCY=2 for two): a
// background job on a machine shared with CI.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Stryker } from '@stryker-mutator/core';

const root = path.resolve(import.meta.dirname, '..');

/** The test files that may kill the auth folder's mutants (the folder and its parts below), cheapest first. */
const AUTH_TESTS = [
  // The request gate's rules (authenticate.ts) and the key-use bookkeeping (api-key-usage.ts) on a
  // small in-process app: seconds, where the HTTP files below take minutes.
  'src/platform/auth/api-key-usage.test.ts',
  'src/platform/auth/authenticate-rules.test.ts',
  'src/platform/auth/authenticate-scopes.test.ts',
  'src/platform/auth/passwords.test.ts',
  'src/platform/auth/jwt-secret.test.ts',
  'src/platform/auth/jwt-signer.test.ts',
  'src/platform/auth/gate-cache-rules.test.ts',
  // The bus's NOTIFY protocol against a peer played by hand: PostgreSQL only (auth/gate-bus).
  'src/platform/auth/gate-bus-rules.test.ts',
  'src/platform/auth/gate.test.ts',
  'src/platform/auth/jwt.test.ts',
  'src/platform/auth/gate-cache.test.ts',
  'src/modules/auth/security.test.ts',
  'src/modules/auth/sessions.test.ts',
  'src/modules/api-keys/api-keys.test.ts',
  'test/api-key-auth.test.ts',
  'test/scopes.test.ts',
];

/**
 * Scoped folder → the test files that may kill its mutants, cheapest first (a mutant runs the
 * files that reach it in this order and stops at the first failure). A name with a `/` is a
 * quicker part of a folder (`only`: the files mutated) with the unit tests of its rule.
 */
/** The campaigns folder's files (the folder and its parts below): the fast rule files first, rows written directly, seconds each; then the HTTP and sandbox files. */
const CAMPAIGNS_TESTS = [
  'src/modules/campaigns/present-rules.test.ts',
  'src/modules/campaigns/contacts-csv-rules.test.ts',
  'src/modules/campaigns/dialer-sql-rules.test.ts',
  'src/modules/campaigns/dialer-pass-rules.test.ts',
  'src/modules/campaigns/dialer-finish-rules.test.ts',
  'src/modules/campaigns/dialer-wake-rules.test.ts',
  'src/modules/campaigns/results-rules.test.ts',
  'src/modules/campaigns/service-rules.test.ts',
  'src/modules/campaigns/service-lists-rules.test.ts',
  'src/modules/campaigns/routes-rules.test.ts',
  'src/modules/campaigns/calling-window.test.ts',
  'src/modules/campaigns/concurrency.test.ts',
  'src/modules/campaigns/csv-injection.test.ts',
  'src/modules/campaigns/dialer.test.ts',
  'src/modules/campaigns/campaigns.test.ts',
];

/** The calls folder's files (the folder and its part below). */
const CALLS_TESTS = [
  // The fast rule files first (seconds: the journal, its SQL, the service, reads and post-call job on the
  // database directly; then the runner's on the sandbox at full speed), then the HTTP and sandbox files.
  'src/modules/calls/journal-rules.test.ts',
  'src/modules/calls/journal-finish-rules.test.ts',
  'src/modules/calls/journal-post-call-rules.test.ts',
  'src/modules/calls/dialer-sql-rules.test.ts',
  'src/modules/calls/signed-links.test.ts',
  'src/modules/calls/preconditions-rules.test.ts',
  'src/modules/calls/reads-rules.test.ts',
  'src/modules/calls/reads-export-rules.test.ts',
  'src/modules/calls/service-rules.test.ts',
  'src/modules/calls/service-control-rules.test.ts',
  'src/modules/calls/raw-tracks-rules.test.ts',
  'src/modules/calls/post-call-rules.test.ts',
  'src/modules/calls/post-call-retry-rules.test.ts',
  'src/modules/calls/call-events-rules.test.ts',
  'src/modules/calls/gauges-trace-rules.test.ts',
  'src/modules/calls/worker-rules.test.ts',
  'src/modules/calls/ownership-rules.test.ts',
  'src/modules/calls/runner-rules.test.ts',
  'src/modules/calls/runner-session-rules.test.ts',
  'src/modules/calls/billing.test.ts',
  'src/modules/calls/calls.test.ts',
  'src/modules/calls/crash.test.ts',
  'src/modules/calls/post-call.test.ts',
  'src/modules/calls/raw-tracks.test.ts',
  'src/modules/calls/per-process.test.ts',
  'src/modules/calls/reproducible.test.ts',
];

/** The test files that may kill the call runtime's mutants (the folder and its parts below), cheapest first. */
const RUNTIME_TESTS = [
  'src/runtime/clock.test.ts',
  'src/runtime/virtual-clock.test.ts',
  'src/runtime/frame-pacer.test.ts',
  'src/runtime/early-transcript.test.ts',
  'src/runtime/audio/audio.test.ts',
  'src/runtime/call-session.test.ts',
  'src/runtime/call-session-rules.test.ts',
  'src/runtime/speech-model-call.test.ts',
  'src/runtime/streaming-recognizer.test.ts',
  'src/runtime/pipeline/call-pipeline.test.ts',
  'src/runtime/pipeline/interim-barge-in.test.ts',
  'src/runtime/pipeline/model-stages.test.ts',
  // The runtime's code that only real transports reach (codecs, the media writer, Twilio frames).
  'src/modules/voice/media-socket.test.ts',
  'src/modules/voice/media-writer.test.ts',
  'src/modules/telephony/twilio.test.ts',
  'src/modules/calls/calls.test.ts',
];

const FOLDERS = {
  // test/ssrf-url-fields.test.ts (every URL field over HTTP) takes 30 s a run: left out.
  outbound: { dir: 'src/platform/outbound', tests: ['src/platform/outbound/ssrf-guard.test.ts'] },
  auth: { dir: 'src/platform/auth', tests: AUTH_TESTS },
  widgets: {
    dir: 'src/modules/widgets',
    tests: [
      'src/modules/widgets/origin.test.ts',
      'src/modules/widgets/rules.test.ts',
      'src/modules/widgets/widgets.test.ts',
      'src/modules/widgets/public.test.ts',
      'src/modules/widgets/owner-rules.test.ts',
      'src/modules/widgets/public-rules.test.ts',
      // The widget's voice session stays on the built-in media WebSocket when LiveKit is configured.
      'src/modules/widgets/voice-livekit.test.ts',
    ],
  },
  wallet: {
    dir: 'src/modules/wallet',
    tests: ['src/modules/wallet/wallet.test.ts', 'src/modules/payments/payments.test.ts'],
  },
  payments: {
    dir: 'src/modules/payments',
    tests: [
      'src/modules/payments/payments.test.ts',
      'src/modules/payments/stripe-settlement.test.ts',
      'src/modules/payments/history.test.ts',
      'src/providers/payments/stripe.test.ts',
    ],
  },
  campaigns: { dir: 'src/modules/campaigns', tests: CAMPAIGNS_TESTS },
  runtime: { dir: 'src/runtime', tests: RUNTIME_TESTS },
  calls: { dir: 'src/modules/calls', tests: CALLS_TESTS },
  // The origin rule (normaliseOrigin, originAllowed: lines 1-37); answerCors is public.test.ts's, over HTTP.
  'widgets/origin': { dir: 'src/modules/widgets', only: ['origin.ts:1-37'], tests: ['src/modules/widgets/origin.test.ts'], part: true },
  // The money rules (ledger, low-balance event, auto-recharge re-arm); routes.ts is HTTP glue.
  'wallet/repo': { dir: 'src/modules/wallet', only: ['repo.ts'], tests: ['src/modules/wallet/wallet.test.ts', 'src/modules/payments/payments.test.ts'], part: true },
  'campaigns/calling-window': {
    dir: 'src/modules/campaigns',
    only: ['calling-window.ts'],
    tests: ['src/modules/campaigns/calling-window.test.ts'],
    part: true,
  },
  // The campaigns folder in four parts, each for one sitting: the dialer, the data (upload, results, views), the service, the routes.
  'campaigns/dialer': { dir: 'src/modules/campaigns', only: ['dialer.ts', 'dialer-sql.ts'], tests: CAMPAIGNS_TESTS, part: true },
  'campaigns/data': { dir: 'src/modules/campaigns', only: ['contacts-csv.ts', 'results.ts', 'present.ts'], tests: CAMPAIGNS_TESTS, part: true },
  'campaigns/service': { dir: 'src/modules/campaigns', only: ['service.ts', 'repo.ts', 'csv-worker.ts'], tests: CAMPAIGNS_TESTS, part: true },
  // The routes and the module's wiring: mostly documentation (summaries, descriptions, examples),
  // which only the committed openapi.json sees, so its drift test runs first here.
  'campaigns/routes': { dir: 'src/modules/campaigns', only: ['routes.ts', 'module.ts'], tests: ['test/openapi-drift.test.ts', ...CAMPAIGNS_TESTS], part: true },
  // The CallJournal (the only writer of calls), its post-call claim and the calls dialer's statements: the money and lease rules.
  'calls/journal': { dir: 'src/modules/calls', only: ['journal.ts', 'post-call-sql.ts', 'dialer-sql.ts'], tests: CALLS_TESTS, part: true },
  // The rest of the calls folder in four parts: after the call, the runner, the service and reads, the routes.
  // Its rule files only: with the slow files in its list (sandbox calls, processes), session 23's run
  // went at 1.5 mutants a minute and was stopped. A survivor is then planted against those files by hand.
  'calls/post-call': {
    dir: 'src/modules/calls',
    only: ['post-call.ts', 'raw-tracks.ts', 'signed-links.ts'],
    tests: ['src/modules/calls/signed-links.test.ts', 'src/modules/calls/raw-tracks-rules.test.ts', 'src/modules/calls/post-call-rules.test.ts', 'src/modules/calls/post-call-retry-rules.test.ts', 'src/modules/calls/journal-post-call-rules.test.ts'],
    part: true,
  },
  // Its rule files and the billing test only, as for calls/post-call: plant a survivor against the slow files by hand.
  'calls/runner': {
    dir: 'src/modules/calls',
    only: ['runner.ts', 'worker.ts', 'end-events.ts', 'call-events.ts', 'call-trace.ts', 'gauges.ts', 'ownership.ts'],
    // CALLS_TESTS from call-events-rules up to billing (the files before calls.test.ts).
    tests: CALLS_TESTS.slice(CALLS_TESTS.indexOf('src/modules/calls/call-events-rules.test.ts'), CALLS_TESTS.indexOf('src/modules/calls/calls.test.ts')),
    part: true,
  },
  'calls/service': { dir: 'src/modules/calls', only: ['service.ts', 'preconditions.ts', 'reads.ts', 'repo.ts', 'figures.ts'], tests: CALLS_TESTS, part: true },
  // The routes' own rules over HTTP on rows written directly (no call runs); the drift test kills the
  // documentation's mutants. The sandbox calls of calls.test.ts are for planting by hand.
  'calls/routes': {
    dir: 'src/modules/calls',
    only: ['routes.ts', 'routes/*.ts', 'module.ts'],
    tests: ['test/openapi-drift.test.ts', 'src/modules/calls/routes-rules.test.ts', 'src/modules/calls/signed-links.test.ts', 'src/modules/calls/billing.test.ts'],
    part: true,
  },
  // The auth folder in three parts, each short enough for one sitting (the whole folder, 781
  // mutants, runs its seven files up to 90 s a mutant: some 3 h at concurrency 2 on two cores).
  'auth/tokens': { dir: 'src/platform/auth', only: ['jwt.ts', 'passwords.ts', 'api-key-format.ts', 'access.ts', 'gate.ts'], tests: AUTH_TESTS, part: true },
  'auth/authenticate': { dir: 'src/platform/auth', only: ['authenticate.ts', 'api-key-usage.ts'], tests: AUTH_TESTS, part: true },
  // The gate's cache of keys, members and workspaces (PGlite is enough: its rules are in-process).
  'auth/gate-cache': { dir: 'src/platform/auth', only: ['gate-cache.ts'], tests: AUTH_TESTS, part: true },
  // gate-bus.ts alone: its LISTEN/NOTIFY path runs on PostgreSQL only (TEST_DATABASE_URL, a database
  // of its own, MUTATE_CONCURRENCY=1, MUTATE_INCREMENTAL=0, MUTATE_TESTS=the four gate files;
  // docs/testing.md).
  'auth/gate-bus': { dir: 'src/platform/auth', only: ['gate-bus.ts'], tests: AUTH_TESTS, part: true },
  // The runtime in four parts, each for one sitting (the whole folder: ~1,565 mutants).
  // The clocks, the frame pacer, the timed ports and the call's trace.
  // Its fast files only (seconds each), the call's trace last (test/tracing.test.ts, 15 s).
  'runtime/timing': {
    dir: 'src/runtime',
    only: ['clock.ts', 'virtual-clock.ts', 'frame-pacer.ts', 'timed-ports.ts', 'tracing.ts'],
    tests: [
      'src/runtime/tracing.test.ts',
      'src/runtime/timed-ports.test.ts',
      'src/runtime/clock.test.ts',
      'src/runtime/virtual-clock.test.ts',
      'src/runtime/frame-pacer.test.ts',
      'src/runtime/call-session.test.ts',
      'src/runtime/call-session-rules.test.ts',
      'src/runtime/early-transcript.test.ts',
      'test/tracing.test.ts',
    ],
    part: true,
  },
  // The speaking and hearing around a turn: the speaker, sentences, the recognizers, turn detection, the speech model's call.
  'runtime/speech': {
    dir: 'src/runtime',
    only: ['speaker.ts', 'sentence-stream.ts', 'streaming-recognizer.ts', 'early-transcript.ts', 'turn-detector.ts', 'speech-model-call.ts', 'agent-turn.ts', 'call-agent.ts', 'outcome.ts'],
    // Its fast files only (seconds each, every call on a virtual clock); the transports' files are for planting by hand.
    tests: [
      'src/runtime/speech-rules.test.ts',
      'src/runtime/speaker-rules.test.ts',
      'src/runtime/turn-detector-rules.test.ts',
      'src/runtime/streaming-recognizer-rules.test.ts',
      'src/runtime/frame-pacer.test.ts',
      'src/runtime/early-transcript.test.ts',
      'src/runtime/streaming-recognizer.test.ts',
      'src/runtime/call-session-rules.test.ts',
      'src/runtime/call-session.test.ts',
      'src/runtime/pipeline/call-pipeline.test.ts',
      'src/runtime/pipeline/model-stages.test.ts',
      'src/runtime/speech-model-call.test.ts',
      'src/runtime/pipeline/interim-barge-in.test.ts',
    ],
    part: true,
  },
  // The recorder and the voice activity detector: their fast files only (seconds each; the recorder's
  // raw tracks are the calls module's, the detector runs in every cascade call).
  'runtime/audio': {
    dir: 'src/runtime',
    only: ['audio/*.ts'],
    tests: ['src/runtime/audio/audio-rules.test.ts', 'src/runtime/audio/audio.test.ts', 'src/modules/calls/raw-tracks-rules.test.ts', 'src/modules/calls/raw-tracks.test.ts', 'src/runtime/call-session.test.ts', 'src/runtime/early-transcript.test.ts'],
    part: true,
  },
  // The cascade call and its pipeline (the shell, the stages): the call's rules. Its fast files
  // only (1-5 s each), the stages' rule files first (session 27, under a second each):
  // `speech-model-call.test` and `interim-barge-in.test` (11-13 s each, on every survivor) are run
  // by hand against the survivors instead (scripts/replant-survivors.mjs).
  'runtime/call-session': {
    dir: 'src/runtime',
    only: ['call-session.ts', 'pipeline/*.ts'],
    tests: [
      'src/runtime/pipeline/call-shell-rules.test.ts',
      'src/runtime/pipeline/speech-stage-rules.test.ts',
      'src/runtime/pipeline/speech-stage-edges-rules.test.ts',
      'src/runtime/pipeline/engine-response-rules.test.ts',
      'src/runtime/pipeline/recognition-rules.test.ts',
      'src/runtime/pipeline/model-rules.test.ts',
      'src/runtime/pipeline/model-speech-rules.test.ts',
      'src/runtime/pipeline/model-stages-rules.test.ts',
      'src/runtime/pipeline/model-stages-edges-rules.test.ts',
      'src/runtime/call-session-start-rules.test.ts',
      'src/runtime/call-session-rules.test.ts',
      'src/runtime/call-session.test.ts',
      'src/runtime/early-transcript.test.ts',
      'src/runtime/pipeline/call-pipeline.test.ts',
      'src/runtime/pipeline/model-stages.test.ts',
    ],
    part: true,
  },
};

/**
 * Added last to every module folder's list: the committed openapi.json against the routes. It kills
 * the mutants of a route's documentation (summaries, descriptions, examples), which no behaviour test sees.
 */
const OPENAPI_DRIFT = 'test/openapi-drift.test.ts';

/** Files not mutated: tests and their helpers, and files that hold only types or schemas. */
const NOT_MUTATED = ['**/*.test.ts', '**/test-helpers.ts', '**/browser-helpers.ts', '**/*.d.ts', '**/schemas.ts', '**/schemas-*.ts', '**/tables.ts', 'src/ports/**'];

const asked = process.argv.slice(2).length > 0 ? process.argv.slice(2) : (process.env.MUTATE_FOLDERS?.split(',').filter(Boolean) ?? []);
const unknown = asked.filter((name) => !(name in FOLDERS));
if (unknown.length > 0) {
  console.error(`unknown folder ${unknown.join(', ')}; one of: ${Object.keys(FOLDERS).join(', ')}`);
  process.exit(2);
}
const names = asked.length > 0 ? asked : Object.keys(FOLDERS).filter((name) => !FOLDERS[name].part);

// One migrated PGlite template for every run (scripts/run-tests.mjs reuses it instead of migrating
// a fresh one per mutant). Migrations are not in the mutated folders.
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-mutate-'));
const template = path.join(work, 'pglite-template');
const prepared = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/prepare-template.ts', template], { cwd: root, stdio: 'inherit' });
if (prepared.status !== 0) process.exit(prepared.status ?? 1);
process.env.TEST_PGLITE_TEMPLATE = template;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    fs.rmSync(work, { recursive: true, force: true });
    process.exit(130);
  });
}

const summary = [];
try {
  for (const name of names) {
    const { dir, only } = FOLDERS[name];
    // MUTATE_TESTS (comma-separated files) runs a part against those files instead of its list:
    // the few files that reach the code under study, where the list's HTTP files take minutes each.
    const given = process.env.MUTATE_TESTS ? process.env.MUTATE_TESTS.split(',').filter(Boolean) : FOLDERS[name].tests;
    const tests = dir.startsWith('src/modules/') && !given.includes(OPENAPI_DRIFT) ? [...given, OPENAPI_DRIFT] : given;
    const report = name.replace('/', '-');
    console.log(`\n=== mutate ${name}: ${dir} (${tests.length} test files)`);
    const stryker = new Stryker({
      testRunner: 'tap',
      tap: {
        testFiles: tests,
        // As scripts/run-tests.mjs runs a file, plus Stryker's hook that reports what the file reached.
        nodeArgs: ['--import', 'tsx', '--no-warnings=ExperimentalWarning', '--test-reporter=tap', '-r', '{{hookFile}}', '{{testFile}}'],
        forceBail: true,
      },
      coverageAnalysis: 'perTest',
      mutate: [...(only ? only.map((file) => `${dir}/${file}`) : [`${dir}/**/*.ts`]), ...NOT_MUTATED.map((glob) => `!${glob}`)],
      concurrency: Number(process.env.MUTATE_CONCURRENCY ?? 1),
      // The machine is shared: a slow run under load must not be counted as a timeout (a timeout
      // counts as detected). Two minutes above five times the file's own time: only a mutant that
      // really loops waits that long.
      timeoutFactor: 5,
      timeoutMS: Number(process.env.MUTATE_TIMEOUT_MS ?? 120_000),
      // The first run of every file (with coverage) may take long on a loaded machine: Stryker's 5 minutes is not enough.
      dryRunTimeoutMinutes: 30,
      tempDirName: '.stryker-tmp',
      // Stryker rewrites the sandbox's tsconfig through the TypeScript JS API, absent from TypeScript 7;
      // ours has no `extends` nor `references` to rewrite, so it is pointed at no file.
      tsconfigFile: 'no-tsconfig-rewrite.json',
      ignorePatterns: ['reports', 'scratch', 'data', '.test-work', 'test-artifacts'],
      reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
      clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
      htmlReporter: { fileName: `reports/mutation/${report}.html` },
      jsonReporter: { fileName: `reports/mutation/${report}.json` },
      cleanTempDir: true,
      // Kept in git: the next run (another session, another machine) reruns only the mutants whose
      // code or covering test files changed, so a folder's score builds up over several runs.
      incremental: process.env.MUTATE_INCREMENTAL !== '0',
      incrementalFile: `test/mutation/${report}.incremental.json`,
    });
    const results = await stryker.runMutationTest();
    const count = (...statuses) => results.filter((r) => statuses.includes(r.status)).length;
    const detected = count('Killed', 'Timeout');
    const valid = results.length - count('CompileError', 'RuntimeError', 'Ignored');
    summary.push({
      folder: name,
      mutants: results.length,
      killed: count('Killed'),
      timeout: count('Timeout'),
      survived: count('Survived'),
      noCoverage: count('NoCoverage'),
      errors: count('CompileError', 'RuntimeError'),
      score: valid > 0 ? `${((100 * detected) / valid).toFixed(1)} %` : 'n/a',
    });
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
  if (summary.length > 0) console.table(summary);
}
