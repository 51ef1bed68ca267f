import type { WorkspaceContext } from '../../platform/auth/access.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { conflict, notFound } from '../../platform/errors.ts';
import type { BrandingRepo, BrandingRow } from './repo.ts';
import { type Branding, type BrandingBody, DEFAULT_ACCENT_COLOR, DEFAULT_PRIMARY_COLOR, type PublicBranding } from './schemas.ts';

/** Host names compare case-insensitively and without a trailing dot. */
export const normaliseDomain = (domain: string) => domain.trim().toLowerCase().replace(/\.$/, '');

/** The host name of a Host header (`name[:port]`, `[v6]:port`), normalised; undefined when it is not one. */
export function domainOfHost(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
  return name ? normaliseDomain(name) : undefined;
}

export function presentPublicBranding(row: BrandingRow): PublicBranding {
  return {
    domain: row.domain,
    name: row.name,
    logo_url: row.logo_url,
    favicon_url: row.favicon_url,
    primary_color: row.primary_color,
    accent_color: row.accent_color,
    support_email: row.support_email,
    support_url: row.support_url,
    hide_powered_by: row.hide_powered_by,
  };
}

function present(row: BrandingRow): Branding {
  return { ...presentPublicBranding(row), created_at: new Date(row.created_at).toISOString(), updated_at: new Date(row.updated_at).toISOString() };
}

export function createBrandingService(deps: { db: Database; clock: Clock; repo: BrandingRepo }) {
  const { db, clock, repo } = deps;
  return {
    async get(ctx: WorkspaceContext): Promise<Branding> {
      const row = await repo.find(db, ctx.workspaceId);
      if (!row) throw notFound('branding');
      return present(row);
    },

    async put(ctx: WorkspaceContext, body: BrandingBody): Promise<Branding> {
      const domain = normaliseDomain(body.domain);
      const holder = await repo.findByDomain(db, domain);
      if (holder && holder.workspace_id !== ctx.workspaceId) throw conflict(`the domain ${domain} is already used by another workspace`);
      const row = await repo.upsert(
        db,
        ctx.workspaceId,
        {
          domain,
          name: body.name,
          logo_url: body.logo_url ?? null,
          favicon_url: body.favicon_url ?? null,
          primary_color: (body.primary_color ?? DEFAULT_PRIMARY_COLOR).toLowerCase(),
          accent_color: (body.accent_color ?? DEFAULT_ACCENT_COLOR).toLowerCase(),
          support_email: body.support_email ?? null,
          support_url: body.support_url ?? null,
          hide_powered_by: body.hide_powered_by ?? false,
        },
        clock.now(),
      );
      return present(row);
    },

    async remove(ctx: WorkspaceContext): Promise<void> {
      if (!(await repo.remove(db, ctx.workspaceId))) throw notFound('branding');
    },

    /** The public lookup; undefined when no workspace brands this domain. */
    async forDomain(domain: string): Promise<BrandingRow | undefined> {
      return repo.findByDomain(db, normaliseDomain(domain));
    },
  };
}

export type BrandingService = ReturnType<typeof createBrandingService>;
