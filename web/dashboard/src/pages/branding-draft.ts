import type { Branding, PutBrandingBody } from '../../../../sdks/typescript/src/index.ts';
import { HEX_COLOR } from '../ui/color.ts';

// The branding form's state: the workspace's white-label settings as the inputs hold them, and
// back to the PUT body (the whole branding: an empty link is null, colours default to the
// platform's). Plain functions, unit-tested on Node.

export const DEFAULT_BRAND_PRIMARY = '#4f46e5';
export const DEFAULT_BRAND_ACCENT = '#0f172a';

export interface BrandingDraft {
  domain: string;
  name: string;
  logo_url: string;
  favicon_url: string;
  primary_color: string;
  accent_color: string;
  support_email: string;
  support_url: string;
  hide_powered_by: boolean;
}

export type BrandingDraftErrors = Partial<Record<keyof BrandingDraft, string>>;

export function brandingDraftOf(branding: Branding | null): BrandingDraft {
  return {
    domain: branding?.domain ?? '',
    name: branding?.name ?? '',
    logo_url: branding?.logo_url ?? '',
    favicon_url: branding?.favicon_url ?? '',
    primary_color: branding?.primary_color ?? DEFAULT_BRAND_PRIMARY,
    accent_color: branding?.accent_color ?? DEFAULT_BRAND_ACCENT,
    support_email: branding?.support_email ?? '',
    support_url: branding?.support_url ?? '',
    hide_powered_by: branding?.hide_powered_by ?? false,
  };
}

const HTTP_URL = /^https?:\/\/[^\s"<>]+$/;
const HOST = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

export function brandingPutOf(draft: BrandingDraft): { body: PutBrandingBody; errors: BrandingDraftErrors } {
  const errors: BrandingDraftErrors = {};
  const domain = draft.domain.trim().toLowerCase();
  if (!HOST.test(domain)) errors.domain = 'A host name without scheme or port, e.g. voice.example.com';
  if (draft.name.trim() === '') errors.name = 'The brand name shown instead of the platform’s';
  const link = (key: 'logo_url' | 'favicon_url' | 'support_url') => {
    const value = draft[key].trim();
    if (value !== '' && !HTTP_URL.test(value)) errors[key] = 'An http(s) address';
    return value === '' ? null : value;
  };
  for (const key of ['primary_color', 'accent_color'] as const) {
    if (!HEX_COLOR.test(draft[key].trim())) errors[key] = 'A colour as #rrggbb';
  }
  const email = draft.support_email.trim();
  if (email !== '' && !/^[^\s@]+@[^\s@]+$/.test(email)) errors.support_email = 'An email address';
  const body: PutBrandingBody = {
    domain,
    name: draft.name.trim(),
    logo_url: link('logo_url'),
    favicon_url: link('favicon_url'),
    primary_color: draft.primary_color.trim(),
    accent_color: draft.accent_color.trim(),
    support_email: email === '' ? null : email,
    support_url: link('support_url'),
    hide_powered_by: draft.hide_powered_by,
  };
  return { body, errors };
}

export function brandingDraftField(path: string): keyof BrandingDraft | undefined {
  return path in brandingDraftOf(null) ? (path as keyof BrandingDraft) : undefined;
}
