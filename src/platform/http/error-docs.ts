import type { FastifyInstance } from 'fastify';
import { ERROR_DOCS } from '../error-catalog.ts';
import { ERROR_STATUS, type ErrorCode, titleFor } from '../errors.ts';

// GET /docs/errors: the page every problem `type` resolves to (`<PUBLIC_BASE_URL>/docs/errors#<code>`),
// one section per code with its status, meaning and fix, generated from the catalog. A real route
// (not a client route of the dashboard), outside the API's schema.

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** `code` spans in the table's text become <code> elements. */
const inline = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

/** The problem `type` of `code`: its section of the page, on the platform's own base URL. */
export function problemTypeUrl(baseUrl: string, code: ErrorCode): string {
  return `${baseUrl}/docs/errors#${code}`;
}

export function errorDocsPage(): string {
  const codes = Object.keys(ERROR_STATUS) as ErrorCode[];
  const sections = codes
    .map((code) => {
      const status = ERROR_STATUS[code];
      const doc = ERROR_DOCS[code];
      return `<section id="${code}"><h2><a href="#${code}">${code}</a></h2><p class="status">HTTP ${status} ${escapeHtml(titleFor(status))}</p><p><strong>Meaning.</strong> ${inline(doc.meaning)}</p><p><strong>Fix.</strong> ${inline(doc.fix)}</p></section>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Error codes</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}h2{font-size:1.1rem;margin:1.5rem 0 .25rem}h2 a{color:#0b4f9c}.status{color:#444;margin:0}section:target{background:#fff7d6;outline:4px solid #fff7d6}code{background:#f2f2f2;padding:0 .2em}</style>
</head><body>
<h1>Error codes</h1>
<p>Every error is an RFC 9457 <code>application/problem+json</code> body whose <code>type</code> links to its section here and whose <code>code</code> names it. Quote the <code>request_id</code> when you report one.</p>
${sections}
</body></html>`;
}

export function registerErrorDocs(app: FastifyInstance): void {
  const page = errorDocsPage();
  app.get('/docs/errors', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(page));
}
