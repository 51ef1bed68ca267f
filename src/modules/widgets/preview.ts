import type { PublicBranding } from '../branding/schemas.ts';

// The widget's preview: a neutral page holding the widget, under the branding of the domain it is
// served on (or the platform's own look when that domain has none). Every value is escaped.

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

export const PLATFORM_NAME = 'Voice Agent Platform';

export function previewPage(input: { widgetId: string; widgetName: string; branding: PublicBranding | undefined }): string {
  const { branding } = input;
  const brand = escapeHtml(branding?.name ?? PLATFORM_NAME);
  const primary = branding?.primary_color ?? '#4f46e5';
  const accent = branding?.accent_color ?? '#0f172a';
  const logo = branding?.logo_url ? `<img class="logo" src="${escapeHtml(branding.logo_url)}" alt="${brand} logo">` : '';
  // No favicon: an empty one, so the browser asks the API for no /favicon.ico.
  const favicon = `<link rel="icon" href="${branding?.favicon_url ? escapeHtml(branding.favicon_url) : 'data:,'}">`;
  const support = [
    branding?.support_email ? `<a href="mailto:${escapeHtml(branding.support_email)}">${escapeHtml(branding.support_email)}</a>` : '',
    branding?.support_url ? `<a href="${escapeHtml(branding.support_url)}" rel="noopener">Support</a>` : '',
  ].filter(Boolean).join(' · ');
  const poweredBy = branding?.hide_powered_by ? '' : `<p class="powered">Powered by ${escapeHtml(PLATFORM_NAME)}</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(input.widgetName)} · ${brand}</title>
${favicon}
<style>
  :root { --brand: ${primary}; --accent: ${accent}; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2937; background: #f8fafc; }
  header { display: flex; align-items: center; gap: 12px; padding: 16px 24px; background: var(--accent); color: #fff; }
  header .logo { height: 32px; width: auto; }
  header .brand { font-weight: 600; font-size: 18px; }
  main { max-width: 720px; margin: 0 auto; padding: 32px 24px 120px; }
  h1 { font-size: 24px; margin: 0 0 8px; }
  .hint { color: #475569; }
  .placeholder { height: 14px; margin: 14px 0; border-radius: 7px; background: #e2e8f0; }
  .placeholder.short { width: 60%; }
  footer { padding: 16px 24px; color: #64748b; font-size: 14px; }
  footer a { color: var(--brand); }
  .powered { margin: 4px 0 0; font-size: 12px; }
</style>
</head>
<body>
<header>${logo}<span class="brand">${brand}</span></header>
<main>
  <h1>${escapeHtml(input.widgetName)}</h1>
  <p class="hint">This is a preview of the widget on a neutral page. Open it with the button in the corner.</p>
  <div class="placeholder"></div><div class="placeholder"></div><div class="placeholder short"></div>
  <div class="placeholder"></div><div class="placeholder short"></div>
</main>
<footer>${support}${poweredBy}</footer>
<script src="/v1/widgets/${escapeHtml(input.widgetId)}/embed.js" async></script>
</body>
</html>
`;
}
