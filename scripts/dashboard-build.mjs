#!/usr/bin/env node
// `npm run dashboard:build`: builds web/dashboard into web/dashboard/dist (committed, so a fresh
// clone serves it without building: docs/decisions.md), writes a gzip copy beside each text asset
// (served to clients that accept it) and build-info.json (the inputs' hash and the sizes), and
// reports the size of the first load.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { build } from 'vite';
import { DASHBOARD, DIST, dashboardInputsHash } from './dashboard-inputs.mjs';

await build({ configFile: path.join(DASHBOARD, 'vite.config.ts'), mode: 'production' });

const COMPRESSIBLE = /\.(js|css|html|svg|json|txt)$/;
const files = {};
for (const name of fs.readdirSync(DIST, { recursive: true }).map(String).sort()) {
  const full = path.join(DIST, name);
  if (!fs.statSync(full).isFile()) continue;
  const bytes = fs.readFileSync(full);
  const entry = { bytes: bytes.length };
  if (COMPRESSIBLE.test(name)) {
    // mtime 0 in the gzip header (zlib's default): the same input gives the same bytes.
    const gz = zlib.gzipSync(bytes, { level: 9 });
    fs.writeFileSync(`${full}.gz`, gz);
    entry.gzip = gz.length;
  }
  files[name.split(path.sep).join('/')] = entry;
}

// The first load: index.html and every script and stylesheet it names.
const html = fs.readFileSync(path.join(DIST, 'index.html'), 'utf8');
const named = [...html.matchAll(/(?:src|href)="\/([^"]+)"/g)].map((m) => m[1]).filter((name) => files[name]);
const firstLoad = ['index.html', ...named].reduce((sum, name) => sum + (files[name].gzip ?? files[name].bytes), 0);
const info = { inputs_sha256: dashboardInputsHash(), first_load_gzip_bytes: firstLoad, files };
fs.writeFileSync(path.join(DIST, 'build-info.json'), `${JSON.stringify(info, null, 2)}\n`);
for (const [name, entry] of Object.entries(files)) console.log(`${name.padEnd(40)} ${String(entry.bytes).padStart(8)} B${entry.gzip ? `  ${String(entry.gzip).padStart(7)} B gzip` : ''}`);
console.log(`first load: ${(firstLoad / 1024).toFixed(1)} KiB gzipped (budget 300 KiB)`);
