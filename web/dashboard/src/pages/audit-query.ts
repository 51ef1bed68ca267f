import type { AuditEntry, ListAuditLogQuery } from '../../../../sdks/typescript/src/index.ts';

// The audit page's filters as the API's query (dates are whole days in the browser's time zone:
// `until` is the start of the day after `to`, the API's bound being exclusive), how an entry
// reads, and the paging: the cursors of the pages already seen, so "Newer" goes back without
// a cursor the API does not offer.

export interface AuditFilters {
  actor_id: string;
  from: string;
  to: string;
}

export const NO_AUDIT_FILTERS: AuditFilters = { actor_id: '', from: '', to: '' };

/** "2026-11-28" → the start of that day here; undefined for an empty or malformed date. */
function startOfDay(date: string, addDays = 0): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!match) return undefined;
  return new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]) + addDays);
}

export function auditQueryOf(filters: AuditFilters): ListAuditLogQuery {
  const query: ListAuditLogQuery = {};
  if (filters.actor_id) query.actor_id = filters.actor_id;
  const since = startOfDay(filters.from);
  const until = startOfDay(filters.to, 1);
  if (since) query.since = since.toISOString();
  if (until) query.until = until.toISOString();
  return query;
}

/** A range the API would refuse (until before since), said before asking it. */
export function auditFilterProblem(filters: AuditFilters): string | undefined {
  const since = startOfDay(filters.from);
  const until = startOfDay(filters.to, 1);
  return since && until && until <= since ? 'The "To" date is before the "From" date.' : undefined;
}

export function actorLabel(entry: Pick<AuditEntry, 'actor'>): string {
  const who = entry.actor.name ?? entry.actor.id;
  return entry.actor.type === 'api_key' ? `API key ${who}` : who;
}

/** "PATCH /v1/workspaces/:id" or, for a key's use (no request of its own), "API key used". */
export function requestLabel(entry: Pick<AuditEntry, 'method' | 'route'>): string {
  return entry.method && entry.route ? `${entry.method} ${entry.route}` : 'API key used';
}

/** The cursor of each page seen so far: the first page has none. */
export interface AuditPaging {
  cursors: Array<string | undefined>;
}

export const FIRST_AUDIT_PAGE: AuditPaging = { cursors: [undefined] };

export const currentCursor = (paging: AuditPaging) => paging.cursors[paging.cursors.length - 1];
export const pageNumber = (paging: AuditPaging) => paging.cursors.length;

export function olderPage(paging: AuditPaging, nextCursor: string | null): AuditPaging {
  return nextCursor ? { cursors: [...paging.cursors, nextCursor] } : paging;
}

export function newerPage(paging: AuditPaging): AuditPaging {
  return paging.cursors.length > 1 ? { cursors: paging.cursors.slice(0, -1) } : paging;
}
