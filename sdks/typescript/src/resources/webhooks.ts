import { WebhooksBase } from '../generated/resources/webhooks.js';
import { type HeaderSource, type VerifyOptions, verifyWebhook } from '../webhooks.js';

/** `client.webhooks`: the tenant webhook's operations, and verification of deliveries. */
export class Webhooks extends WebhooksBase {
  /** Verifies a delivery (raw body, its headers, the `whsec_` secret); returns the parsed event. */
  verify<T = unknown>(payload: string | Uint8Array, headers: HeaderSource, secret: string, options?: VerifyOptions): Promise<T> {
    return verifyWebhook<T>(payload, headers, secret, options);
  }
}
