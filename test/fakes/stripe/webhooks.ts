import { createHmac } from 'node:crypto';
import { type FakeStripeEvent, unixNow } from './objects.ts';

// Webhook delivery as Stripe does it (docs.stripe.com/webhooks#verify-manually): the Event is
// POSTed as JSON, signed in the `Stripe-Signature` header `t=<unix seconds>,v1=<hex>`, where the
// hex is HMAC-SHA256 of `${t}.${raw body}` keyed by the endpoint's signing secret (`whsec_…`).
// The receiver must verify the raw bytes; Stripe pretty-prints the JSON, so a body parsed and
// serialised again no longer matches (the fake pretty-prints too, to catch that mistake).

export function stripeSignatureHeader(payload: string, secret: string, timestamp: number = unixNow()): string {
  const signature = createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex');
  return `t=${timestamp},v1=${signature}`;
}

export interface DeliverOptions {
  /** POST the event a second time (Stripe delivers at least once and retries; receivers dedupe on evt id). */
  duplicate?: boolean;
  /** Change the amounts after signing, as a forger would: the signature no longer matches. */
  tamper?: boolean;
  /** The signature's timestamp in unix seconds (default now): an old one is a replay. */
  signedAt?: number;
  /** Sign with this secret instead of the fake's endpoint secret. */
  secret?: string;
}

export interface Delivery {
  status: number;
  body: string;
}

function tampered(event: FakeStripeEvent): FakeStripeEvent {
  const forged = structuredClone(event);
  forged.data.object.amount *= 100;
  forged.data.object.amount_received *= 100;
  return forged;
}

export async function deliverEvent(url: string, event: FakeStripeEvent, endpointSecret: string, options: DeliverOptions = {}): Promise<Delivery[]> {
  const deliveries: Delivery[] = [];
  for (let attempt = 0; attempt < (options.duplicate ? 2 : 1); attempt++) {
    const payload = JSON.stringify(event, null, 2);
    const signature = stripeSignatureHeader(payload, options.secret ?? endpointSecret, options.signedAt);
    const body = options.tamper ? JSON.stringify(tampered(event), null, 2) : payload;
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'stripe-signature': signature,
        'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      },
      body,
    });
    deliveries.push({ status: response.status, body: await response.text() });
  }
  return deliveries;
}
