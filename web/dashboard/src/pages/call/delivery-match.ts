import type { WebhookDelivery } from '../../../../../sdks/typescript/src/index.ts';

// Which webhook deliveries belong to a call. The deliveries list names the agent but not the call
// (GET /v1/webhooks/deliveries has no call_id filter), so the call's candidates — its agent's
// call events since it was created — are opened and kept when their envelope names the call:
// `call_id` in listing A, `data.call_id` in listing B.

/** At most this many deliveries are opened per look (each is one request). */
export const MAX_OPENED = 25;

export function callIdOfPayload(payload: Record<string, unknown>): string | undefined {
  if (typeof payload.call_id === 'string') return payload.call_id;
  const data = payload.data;
  if (typeof data === 'object' && data !== null && typeof (data as Record<string, unknown>).call_id === 'string') return (data as Record<string, string>).call_id;
  return undefined;
}

/** The deliveries that may be the call's, oldest first (a call's events in order). */
export function candidatesFor(deliveries: WebhookDelivery[], call: { agent_id: string; created_at: string }): WebhookDelivery[] {
  const since = Date.parse(call.created_at);
  return deliveries
    .filter((d) => d.agent_id === call.agent_id && d.event_type.startsWith('call.') && Date.parse(d.created_at) >= since)
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
}
