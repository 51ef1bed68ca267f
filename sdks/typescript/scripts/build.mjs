#!/usr/bin/env node
// Builds dist/esm (ES modules) and dist/cjs (CommonJS), each with its .d.ts, with TypeScript's
// own compiler and nothing else. dist/cjs gets a package.json saying its files are CommonJS.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const pkg = require.resolve('typescript/package.json', { paths: [root, path.resolve(root, '..', '..')] });
const tsc = path.join(path.dirname(pkg), 'bin', 'tsc');

fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
for (const config of ['tsconfig.json', 'tsconfig.cjs.json']) {
  const run = spawnSync(process.execPath, [tsc, '-p', config], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
fs.writeFileSync(path.join(root, 'dist', 'cjs', 'package.json'), '{\n  "type": "commonjs"\n}\n');
console.log('built dist/esm and dist/cjs');
