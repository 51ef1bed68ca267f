import twilio from 'twilio';

// The fake's outgoing HTTP: voice webhooks, status and AMD callbacks, and the WebSocket handshake
// of a Media Stream. Twilio signs each with X-Twilio-Signature: HMAC-SHA1 (auth token) over the
// URL exactly as configured followed by the POST parameters sorted by name, base64. Behind a
// TLS-terminating proxy the configured (public) URL is what gets signed, while the request reaches
// the local address with X-Forwarded-* headers, as it would through the proxy.

/** Twilio waits this long for a webhook answer (its documented default time-out). */
const WEBHOOK_TIMEOUT_MS = 15_000;
/** An address from Twilio's published signalling ranges, as the proxy would forward it. */
const TWILIO_SOURCE_IP = '54.172.60.1';

export interface ProxyMapping {
  publicBaseUrl: string;
  localBaseUrl: string;
}

export interface WebhookAnswer {
  status: number;
  contentType: string;
  body: string;
}

export class WebhookClient {
  private readonly inFlight = new Set<AbortController>();
  private closed = false;

  constructor(
    private readonly authToken: string,
    private readonly proxy?: ProxyMapping,
  ) {}

  sign(url: string, params: Record<string, string>): string {
    return twilio.getExpectedTwilioSignature(this.authToken, url, params);
  }

  /** Where a request for `publicUrl` is really sent, and the headers a proxy on the way would add. */
  route(publicUrl: string): { url: string; headers: Record<string, string> } {
    if (!this.proxy) return { url: publicUrl, headers: {} };
    const target = new URL(publicUrl);
    const published = new URL(this.proxy.publicBaseUrl);
    if (target.host !== published.host) return { url: publicUrl, headers: {} };
    const local = new URL(this.proxy.localBaseUrl);
    const secure = target.protocol === 'https:' || target.protocol === 'wss:';
    const websocket = target.protocol === 'ws:' || target.protocol === 'wss:';
    const scheme = websocket ? local.protocol.replace('http', 'ws') : local.protocol;
    const basePath = local.pathname.replace(/\/$/, '');
    const publicPath = published.pathname.replace(/\/$/, '');
    const path = target.pathname.startsWith(publicPath) ? target.pathname.slice(publicPath.length) : target.pathname;
    return {
      url: `${scheme}//${local.host}${basePath}${path}${target.search}`,
      headers: { 'X-Forwarded-Proto': secure ? 'https' : 'http', 'X-Forwarded-Host': target.host, 'X-Forwarded-For': TWILIO_SOURCE_IP },
    };
  }

  /** One signed webhook. Throws on network failure or time-out (Twilio's error 11200 / 11205). */
  async send(url: string, method: string, params: Record<string, string>): Promise<WebhookAnswer> {
    if (this.closed) throw new Error('fake Twilio closed');
    const get = method.toUpperCase() === 'GET';
    // A GET carries the parameters in the query string, and the signature covers that full URL alone.
    const signedUrl = get ? withQuery(url, params) : url;
    const signature = this.sign(signedUrl, get ? {} : params);
    const routed = this.route(signedUrl);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), WEBHOOK_TIMEOUT_MS);
    this.inFlight.add(controller);
    try {
      const response = await fetch(routed.url, {
        method: get ? 'GET' : 'POST',
        headers: {
          ...routed.headers,
          'X-Twilio-Signature': signature,
          'User-Agent': 'TwilioProxy/1.1',
          Accept: '*/*',
          ...(get ? {} : { 'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8' }),
        },
        body: get ? undefined : new URLSearchParams(params).toString(),
        redirect: 'manual',
        signal: controller.signal,
      });
      return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: await response.text() };
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(controller);
    }
  }

  /** The address and headers of a Media Stream's WebSocket handshake (signed with no parameters). */
  websocketHandshake(streamUrl: string): { url: string; headers: Record<string, string> } {
    const routed = this.route(streamUrl);
    return { url: routed.url, headers: { ...routed.headers, 'X-Twilio-Signature': this.sign(streamUrl, {}) } };
  }

  close(): void {
    this.closed = true;
    for (const controller of this.inFlight) controller.abort();
    this.inFlight.clear();
  }
}

function withQuery(url: string, params: Record<string, string>): string {
  const target = new URL(url);
  for (const [name, value] of Object.entries(params)) target.searchParams.append(name, value);
  return target.toString();
}
