import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { closeAtEnd } from '../../../test/support/cleanup.ts';

// Browser tests' helpers: Debian's Chromium driven by playwright-core (fresh profile, headless,
// no network of its own), a plain third-party page server, and where screenshots go.

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = path.resolve(import.meta.dirname, '../../../test-artifacts');

const BASE_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** Chromium with a fresh profile, closed with the test file. Fails (never skips) when Chromium is missing. */
export async function launchChromium(extraArgs: string[] = []): Promise<BrowserContext> {
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: install it (apt-get install -y chromium); the browser tests need it`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-chromium-'));
  // headless: false here because --headless is passed as given (Playwright's own adds --mute-audio).
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: false, args: [...BASE_ARGS, ...extraArgs], viewport: { width: 1280, height: 800 } });
  closeAtEnd(async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  });
  return context;
}

/** A plain HTTP server on 127.0.0.1 serving one HTML page (another origin than the platform's). */
export async function pageServer(html: string): Promise<string> {
  const server = http.createServer((request, response) => {
    if (request.url === '/favicon.ico') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAtEnd(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // the browser's keep-alive connections
      }),
  );
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

export function thirdPartyPage(embedTag: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Blue Fern bistro</title>
<style>body{margin:0;font:16px/1.5 Georgia,serif;background:#fdf6ec;color:#3b2f2f} header{padding:24px;background:#2f4f3f;color:#fff} main{max-width:760px;margin:0 auto;padding:24px}</style></head>
<body><header><h1>The Blue Fern</h1><p>Seasonal food since 1998</p></header>
<main><h2>Menu</h2><p>Soups, breads and a daily fish. Book a table by phone or ask our assistant.</p>
<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit. Integer nec odio. Praesent libero. Sed cursus ante dapibus diam.</p></main>
${embedTag}
</body></html>`;
}

export function artifact(name: string): string {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}
