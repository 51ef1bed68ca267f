import type { CSSProperties } from 'react';
import type { BrandingDraft } from './branding-draft.ts';

// The platform's public pages (the widget preview) as they look on the branded domain, drawn
// from the form's draft: header in the accent colour with the brand name, links and the widget
// launcher in the primary colour, the support links and "Powered by" in the footer. The logo is
// named, not loaded: the dashboard's content policy loads no image from other sites.

export function BrandingPreview({ draft }: { draft: BrandingDraft }) {
  const style = { '--bp-primary': draft.primary_color, '--bp-accent': draft.accent_color } as CSSProperties;
  const name = draft.name.trim() || 'Your brand';
  return (
    <figure className="branding-preview" aria-labelledby="branding-preview-caption">
      <figcaption id="branding-preview-caption">Preview of {draft.domain.trim() || 'your domain'}</figcaption>
      <div className="bp-page" style={style} data-testid="branding-preview">
        <div className="bp-head" data-testid="branding-preview-head">
          {draft.logo_url.trim() ? <span className="bp-logo">Logo</span> : null}
          <span className="bp-name">{name}</span>
        </div>
        <div className="bp-body">
          <p className="bp-title">Website assistant</p>
          <p>A page of yours with the widget in its corner.</p>
          <span className="bp-launcher" aria-hidden="true" />
        </div>
        <div className="bp-foot">
          {draft.support_email.trim() ? <span className="bp-link">{draft.support_email.trim()}</span> : null}
          {draft.support_url.trim() ? <span className="bp-link">Support</span> : null}
          {draft.hide_powered_by ? null : <span data-testid="powered-by">Powered by Voice Agent Platform</span>}
        </div>
      </div>
    </figure>
  );
}
