import type { PutWebhookBody, WebhookEventType } from '../../../../sdks/typescript/src/index.ts';

// What the workspace's endpoint may receive, from the platform's list of event types.

export type TenantEvent = NonNullable<PutWebhookBody['events']>[number];

/** The event types a workspace endpoint may choose (webhook.test always goes to it), and those it gets by default. */
export function subscribable(types: Pick<WebhookEventType, 'type' | 'tenant_default'>[]): { all: TenantEvent[]; defaults: TenantEvent[] } {
  const events = types.filter((t) => t.type !== 'webhook.test');
  return { all: events.map((t) => t.type as TenantEvent), defaults: events.filter((t) => t.tenant_default).map((t) => t.type as TenantEvent) };
}
