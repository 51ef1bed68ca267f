import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// The dashboard's built files (web/dashboard/dist, committed: docs/decisions.md), read from disk
// at the first request that needs them, never at start-up, and kept in memory (a few hundred KB)
// with their gzip copies and ETags.

export const DASHBOARD_DIST = path.resolve(import.meta.dirname, '../../../web/dashboard/dist');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

export interface Asset {
  body: Buffer;
  gzip: Buffer | undefined;
  type: string;
  etag: string;
}

export interface DashboardFiles {
  /** index.html, or undefined when the dashboard is not built. */
  index: Asset | undefined;
  /** By name under assets/ (hashed names: immutable). */
  assets: Map<string, Asset>;
}

function read(file: string): Asset {
  const body = fs.readFileSync(file);
  const gzip = fs.existsSync(`${file}.gz`) ? fs.readFileSync(`${file}.gz`) : undefined;
  const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
  return { body, gzip, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

export function loadDashboard(dist: string): DashboardFiles {
  const indexFile = path.join(dist, 'index.html');
  const assets = new Map<string, Asset>();
  const assetsDir = path.join(dist, 'assets');
  if (fs.existsSync(assetsDir)) {
    for (const name of fs.readdirSync(assetsDir)) if (!name.endsWith('.gz')) assets.set(name, read(path.join(assetsDir, name)));
  }
  return { index: fs.existsSync(indexFile) ? read(indexFile) : undefined, assets };
}
