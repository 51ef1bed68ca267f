import type { CSSProperties } from 'react';
import type { WidgetDraft } from './widget-draft.ts';

// The widget as a visitor sees it, drawn from the editor's draft (so it follows every keystroke):
// the panel open above its launcher, in the corner, colour, title, greeting and controls of the
// draft. A picture of the widget, not the widget: nothing in it is interactive.

export function WidgetPreview({ draft, greeting }: { draft: WidgetDraft; greeting: string }) {
  const style = { '--wp-color': draft.primary_color } as CSSProperties;
  const chat = draft.mode !== 'voice';
  const voice = draft.mode !== 'chat';
  return (
    <figure className="widget-preview" aria-labelledby="widget-preview-caption">
      <figcaption id="widget-preview-caption">Preview</figcaption>
      <div className={`wp-page wp-${draft.position}`} style={style} data-testid="widget-preview">
        <div className="wp-panel">
          <div className="wp-head" data-testid="widget-preview-head">
            <span className="wp-title">{draft.title || draft.name}</span>
            <span className="wp-close" aria-hidden="true">
              ×
            </span>
          </div>
          <div className="wp-log">
            <p className="wp-msg">{greeting}</p>
          </div>
          {voice ? (
            <div className="wp-voice">
              <span>Talk to us</span>
              <span className="wp-call">Start a call</span>
            </div>
          ) : null}
          {chat ? (
            <div className="wp-input">
              <span>Type a message…</span>
            </div>
          ) : null}
        </div>
        <span className="wp-launcher" aria-hidden="true">
          <svg viewBox="0 0 24 24" focusable="false" aria-hidden="true">
            <path d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z" />
          </svg>
        </span>
      </div>
    </figure>
  );
}
