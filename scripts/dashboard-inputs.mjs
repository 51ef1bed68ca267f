// What the dashboard's build depends on, as one hash: its sources, the SDK's sources and the
// versions of the packages bundled or building it. `npm run dashboard:build` records it in
// web/dashboard/dist/build-info.json; test/dashboard/serving.test.ts fails when the committed
// build no longer matches its inputs (a source changed and nobody rebuilt).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const DASHBOARD = path.join(ROOT, 'web/dashboard');
export const DIST = path.join(DASHBOARD, 'dist');

const SOURCES = ['web/dashboard/index.html', 'web/dashboard/vite.config.ts', 'web/dashboard/tsconfig.json', 'web/dashboard/src', 'sdks/typescript/src', 'scripts/dashboard-build.mjs'];
const PACKAGES = ['react', 'react-dom', 'scheduler', '@tanstack/react-query', '@tanstack/query-core', 'react-aria-components', 'wouter', 'vite', 'rolldown'];

function filesUnder(relative) {
  const full = path.join(ROOT, relative);
  if (fs.statSync(full).isFile()) return [relative];
  return fs
    .readdirSync(full, { recursive: true })
    .map(String)
    .filter((name) => fs.statSync(path.join(full, name)).isFile())
    .map((name) => path.posix.join(relative, name.split(path.sep).join('/')));
}

/** The sha256 of the build's inputs (file paths and contents, line endings normalised; package versions from the lockfile). */
export function dashboardInputsHash() {
  const hash = createHash('sha256');
  for (const file of SOURCES.flatMap(filesUnder).sort()) {
    hash.update(`${file}\n`);
    hash.update(fs.readFileSync(path.join(ROOT, file), 'utf8').replaceAll('\r\n', '\n'));
  }
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  for (const name of PACKAGES) hash.update(`${name}@${lock.packages[`node_modules/${name}`]?.version ?? 'absent'}\n`);
  return hash.digest('hex');
}
