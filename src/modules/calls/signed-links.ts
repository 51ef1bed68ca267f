import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';

// Signed links to a call's recording and transcript (DESIGN "Call"): absolute URLs under
// PUBLIC_BASE_URL with `?expires=<unix seconds>&signature=<hex HMAC-SHA256 of path and expiry>`,
// valid 7 days, usable without credentials. The key is derived from the app's JWT secret.

export const LINK_TTL_SECONDS = 7 * 86_400;

export function createLinkSigner(deps: { secret: string; publicBaseUrl: string; clock: Clock }) {
  const key = createHmac('sha256', deps.secret).update('signed-links-v1').digest();
  const mac = (path: string, expires: number) => createHmac('sha256', key).update(`${path}\n${expires}`).digest('hex');

  return {
    /** The absolute signed URL of `path` (which starts with /v1/). */
    sign(path: string, ttlSeconds = LINK_TTL_SECONDS): string {
      const expires = Math.floor(deps.clock.now().getTime() / 1000) + ttlSeconds;
      return `${deps.publicBaseUrl}${path}?expires=${expires}&signature=${mac(path, expires)}`;
    },
    /** True when the signature is this server's for `path` and has not expired. */
    verify(path: string, expires: string | undefined, signature: string | undefined): boolean {
      if (!expires || !signature || !/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return false;
      const at = Number(expires);
      if (at * 1000 < deps.clock.now().getTime()) return false;
      return timingSafeEqual(Buffer.from(mac(path, at), 'hex'), Buffer.from(signature, 'hex'));
    },
  };
}

export type LinkSigner = ReturnType<typeof createLinkSigner>;
