import { type Static, Type } from 'typebox';
import { Nullable, Timestamp } from '../../platform/http/schemas.ts';

// White-label branding: how the platform's public pages (the widget preview) look when they are
// served on a customer's domain. One per workspace; the domain is unique across workspaces.

/** A host name: dot-separated labels of letters, digits and hyphens (an IPv4 address passes too). */
export const DOMAIN_PATTERN = '^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\\.?$';
export const COLOR_PATTERN = '^#[0-9a-fA-F]{6}$';
export const DEFAULT_PRIMARY_COLOR = '#4f46e5';
export const DEFAULT_ACCENT_COLOR = '#0f172a';

export const Domain = Type.String({ minLength: 1, maxLength: 253, pattern: DOMAIN_PATTERN, description: 'Host name, without scheme or port (compared case-insensitively)', examples: ['voice.example.com'] });
const Color = Type.String({ pattern: COLOR_PATTERN, description: 'Hex colour #rrggbb' });
const HttpUrl = Type.String({ maxLength: 2048, pattern: '^https?://[^\\s"<>]+$', description: 'http(s) URL' });

export const BrandingBody = Type.Object(
  {
    domain: Domain,
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Brand name shown instead of the platform name' }),
    logo_url: Type.Optional(Nullable(HttpUrl)),
    favicon_url: Type.Optional(Nullable(HttpUrl)),
    primary_color: Type.Optional({ ...Color, description: `Default ${DEFAULT_PRIMARY_COLOR}` }),
    accent_color: Type.Optional({ ...Color, description: `Default ${DEFAULT_ACCENT_COLOR}` }),
    support_email: Type.Optional(Nullable(Type.String({ maxLength: 254, format: 'email' }))),
    support_url: Type.Optional(Nullable(HttpUrl)),
    hide_powered_by: Type.Optional(Type.Boolean({ description: 'Hide "Powered by" on public pages (default false)' })),
  },
  {
    additionalProperties: false,
    title: 'BrandingPut',
    description: 'The whole branding: fields left out take their defaults',
    examples: [{ domain: 'voice.example.com', name: 'Example Voice', logo_url: 'https://example.com/logo.png', primary_color: '#0e7490' }],
  },
);
export type BrandingBody = Static<typeof BrandingBody>;

const publicFields = {
  domain: Type.String({ examples: ['voice.example.com'] }),
  name: Type.String(),
  logo_url: Nullable(Type.String()),
  favicon_url: Nullable(Type.String()),
  primary_color: Type.String({ examples: [DEFAULT_PRIMARY_COLOR] }),
  accent_color: Type.String({ examples: [DEFAULT_ACCENT_COLOR] }),
  support_email: Nullable(Type.String()),
  support_url: Nullable(Type.String()),
  hide_powered_by: Type.Boolean(),
};

export const PublicBranding = Type.Object(publicFields, { title: 'PublicBranding' });
export type PublicBranding = Static<typeof PublicBranding>;
export const Branding = Type.Object({ ...publicFields, created_at: Timestamp, updated_at: Timestamp }, { title: 'Branding' });
export type Branding = Static<typeof Branding>;
