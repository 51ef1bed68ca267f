import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { findLogSecrets, LOGS_FILE } from './support/log-scan.ts';

// Run by scripts/run-tests.mjs after the whole suite, over the log lines every test app and every
// spawned server wrote (test/support/log-scan.ts): no line may hold a secret or personal data.

it('no log line of the suite holds a secret', () => {
  const dir = process.env.TEST_COVERAGE_DIR;
  assert.ok(dir, 'TEST_COVERAGE_DIR is set by scripts/run-tests.mjs');
  const files = fs.readdirSync(dir).filter((file) => LOGS_FILE.test(file));
  assert.ok(files.length > 0, 'the test apps wrote their logs into TEST_COVERAGE_DIR');
  let lines = 0;
  const findings: string[] = [];
  for (const file of files) {
    fs.readFileSync(path.join(dir, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (!line) return;
        lines++;
        // Where and what, never the secret: the message names the finding and the line's msg.
        const msg = /"msg":"([^"]{0,80})/.exec(line)?.[1] ?? '';
        for (const what of findLogSecrets(line)) findings.push(`${file}:${i + 1}: ${what} (msg: ${msg})`);
      });
  }
  assert.ok(lines > 0, 'the suite logged something to scan');
  assert.deepEqual(findings.slice(0, 50), [], `${findings.length} log lines hold secrets (see test/support/log-scan.ts):\n${findings.slice(0, 50).join('\n')}`);
});
