import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manualClock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import type { PublicBranding } from '../branding/schemas.ts';
import { previewPage } from './preview.ts';
import { createWidgetsRepo, type WidgetRow } from './repo.ts';
import { createWidgetsService } from './service.ts';

// The widgets' pure rules: the preview page a domain's branding dresses (every setting shown,
// none invented) and the embed URL built from PUBLIC_BASE_URL.

const branding = (fields: Partial<PublicBranding> = {}): PublicBranding => ({
  domain: 'voice.acme.example',
  name: 'Acme',
  logo_url: null,
  favicon_url: null,
  primary_color: '#112233',
  accent_color: '#445566',
  support_email: null,
  support_url: null,
  hide_powered_by: false,
  ...fields,
});
const page = (b: PublicBranding | undefined) => previewPage({ widgetId: 'wdg_01jdq3x4k5m6n7p8q9r0s1t2v3', widgetName: 'Ask us', branding: b });
const footer = (html: string) => html.match(/<footer>(.*)<\/footer>/s)?.[1];
const header = (html: string) => html.match(/<header>(.*)<\/header>/s)?.[1];

describe('previewPage', () => {
  it("without branding: the platform's colours, an empty favicon, no logo, no support links, Powered by", () => {
    const html = page(undefined);
    assert.ok(html.includes(':root { --brand: #4f46e5; --accent: #0f172a; }'), html);
    assert.ok(html.includes('<link rel="icon" href="data:,">'), 'no favicon: the browser asks the API for no /favicon.ico');
    assert.equal(header(html), '<span class="brand">Voice Agent Platform</span>');
    assert.equal(footer(html), '<p class="powered">Powered by Voice Agent Platform</p>');
    assert.ok(html.includes('<title>Ask us · Voice Agent Platform</title>'));
  });

  it('a branding: its colours, logo and favicon (escaped)', () => {
    const html = page(branding({ logo_url: 'https://cdn.example.com/l.png?a=1&b=2', favicon_url: 'https://cdn.example.com/f.ico?x="y"' }));
    assert.ok(html.includes(':root { --brand: #112233; --accent: #445566; }'), html);
    assert.ok(html.includes('<link rel="icon" href="https://cdn.example.com/f.ico?x=&quot;y&quot;">'));
    assert.equal(header(html), '<img class="logo" src="https://cdn.example.com/l.png?a=1&amp;b=2" alt="Acme logo"><span class="brand">Acme</span>');
    // No logo, no favicon: nothing in their place.
    const bare = page(branding());
    assert.equal(header(bare), '<span class="brand">Acme</span>');
    assert.ok(bare.includes('<link rel="icon" href="data:,">'));
  });

  it('support links: the e-mail, the URL, both joined by a dot, none when unset; Powered by hidden on request', () => {
    const email = 'help+1@acme.example';
    const url = 'https://acme.example/help?a=1&b=2';
    assert.equal(footer(page(branding({ support_email: email }))), `<a href="mailto:${email}">${email}</a><p class="powered">Powered by Voice Agent Platform</p>`);
    assert.equal(footer(page(branding({ support_url: url }))), '<a href="https://acme.example/help?a=1&amp;b=2" rel="noopener">Support</a><p class="powered">Powered by Voice Agent Platform</p>');
    assert.equal(
      footer(page(branding({ support_email: email, support_url: url, hide_powered_by: true }))),
      `<a href="mailto:${email}">${email}</a> · <a href="https://acme.example/help?a=1&amp;b=2" rel="noopener">Support</a>`,
    );
    assert.equal(footer(page(branding({ hide_powered_by: true }))), '');
    assert.equal(footer(page(branding())), '<p class="powered">Powered by Voice Agent Platform</p>');
  });
});

describe('embed URL', () => {
  const row = {
    id: 'wdg_01jdq3x4k5m6n7p8q9r0s1t2v3',
    workspace_id: 'ws_x',
    agent_id: 'agent_x',
    name: 'Site',
    mode: 'chat',
    theme: { title: 'Ada', greeting: null, primary_color: '#4f46e5', position: 'bottom-right' },
    allowed_origins: [],
    created_at: new Date('2026-11-23T10:00:00.000Z'),
    updated_at: new Date('2026-11-23T10:00:00.000Z'),
    deleted_at: null,
  } as unknown as WidgetRow;
  const serviceAt = (publicBaseUrl: string) =>
    createWidgetsService({ db: undefined as unknown as Database, clock: manualClock(), repo: createWidgetsRepo(), agents: { converse: async () => assert.fail('not called') }, publicBaseUrl });

  it('PUBLIC_BASE_URL with or without trailing slashes: one slash before /v1', () => {
    for (const base of ['https://api.example.com', 'https://api.example.com/', 'https://api.example.com///']) {
      const widget = serviceAt(base).present(row);
      assert.equal(widget.embed_url, 'https://api.example.com/v1/widgets/wdg_01jdq3x4k5m6n7p8q9r0s1t2v3/embed.js', base);
      assert.equal(widget.embed_code, `<script src="${widget.embed_url}" async></script>`);
    }
  });
});
