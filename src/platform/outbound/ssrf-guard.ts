import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, type Dispatcher } from 'undici';
import { invalidField } from '../errors.ts';

// Every request to a user-supplied URL (webhooks, agent functions, knowledge-base URLs) goes
// through here. A URL is refused unless it is http(s) and every address it resolves to is a
// public unicast address — loopback, private, link-local (cloud metadata), CGNAT, multicast and
// reserved ranges are refused — unless ALLOW_PRIVATE_URLS=true. The check runs twice: when the
// URL is saved (assertPublicUrl, a 422 for the caller) and at connect time inside the HTTP agent
// (so a DNS answer that changes after the first check, "DNS rebinding", cannot reach inside).
// Redirects are followed by hand, each hop checked; response bodies are capped.

export class UrlRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UrlRefusedError';
  }
}

/**
 * IPv6 ranges that embed an IPv4 address, refused whole (docs/decisions.md): reaching one hands
 * the packet to whatever IPv4 host the address carries — 127.0.0.1 through `[::127.0.0.1]` — and a
 * legitimate public endpoint is always reachable at its own address instead.
 */
const EMBEDDED_IPV4_RANGES: Array<[ipaddr.IPv6, number]> = (
  [
    ['::', 96], // IPv4-compatible (RFC 4291, deprecated); also holds :: and ::1
    ['::ffff:0:0', 96], // IPv4-mapped
    ['::ffff:0:0:0', 96], // IPv4-translated (RFC 6145)
    ['64:ff9b::', 96], // NAT64 well-known prefix (RFC 6052)
    ['64:ff9b:1::', 48], // NAT64 local-use prefix (RFC 8215)
    ['2002::', 16], // 6to4 (RFC 3056, deprecated by RFC 7526)
    ['2001::', 32], // Teredo (RFC 4380)
  ] as const
).map(([prefix, bits]) => [ipaddr.IPv6.parse(prefix), bits]);

export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && EMBEDDED_IPV4_RANGES.some((range) => (parsed as ipaddr.IPv6).match(range))) return false;
  return parsed.range() === 'unicast';
}

function parseHttpUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefusedError('is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlRefusedError('must use http or https');
  if (url.username || url.password) throw new UrlRefusedError('must not contain credentials');
  return url;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Refuses a URL that is not http(s) or resolves to a non-public address (unless allowed). */
export async function assertPublicUrl(raw: string, options: { allowPrivate: boolean }): Promise<URL> {
  const url = parseHttpUrl(raw);
  if (options.allowPrivate) return url;
  const host = hostOf(url);
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await dns.promises.lookup(host, { all: true })).map((a) => a.address);
    } catch {
      throw new UrlRefusedError(`host ${host} does not resolve`);
    }
  }
  const refused = addresses.find((a) => !isPublicAddress(a));
  if (refused !== undefined || addresses.length === 0) {
    throw new UrlRefusedError(`points to a private, loopback, link-local or reserved address (${refused ?? host})`);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** dns.lookup that fails when any answer is not a public address. */
function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback) {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '');
    const list = addresses as dns.LookupAddress[];
    const refused = list.find((a) => !isPublicAddress(a.address));
    if (refused) {
      const error = new UrlRefusedError(`refused connection to non-public address ${refused.address}`) as Error & NodeJS.ErrnoException;
      error.code = 'EREFUSED_PRIVATE';
      return callback(error, '');
    }
    if (options.all) return callback(null, list);
    return callback(null, list[0].address, list[0].family);
  });
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  /** Body bytes, at most maxBytes. */
  body: Buffer;
  truncated: boolean;
  durationMs: number;
  url: string;
}

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs: number;
  /** Bytes of the response body kept; the rest is discarded (truncated: true). */
  maxBytes: number;
  maxRedirects?: number;
}

export function createOutboundClient(options: { allowPrivate: boolean; userAgent?: string }) {
  const agent = new Agent({
    connect: options.allowPrivate ? {} : { lookup: guardedLookup as never },
    keepAliveTimeout: 10_000,
  });

  /** Reads at most maxBytes of a response body; the rest is discarded and the connection let go. */
  async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number) {
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    for await (const chunk of body) {
      const value = chunk as Buffer;
      const room = maxBytes - size;
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, Math.max(0, room)));
        truncated = true;
        // Leaving the loop closes the body (its iterator's return): the rest is never read.
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
    return { body: Buffer.concat(chunks), truncated };
  }

  const flatHeaders = (headers: Dispatcher.ResponseData['headers']): Record<string, string> => {
    const flat: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
    return flat;
  };

  return {
    /** Sends one request; throws UrlRefusedError for a refused URL, or the network error (timeouts are AbortError/TimeoutError). */
    async request(rawUrl: string, request: OutboundRequest): Promise<OutboundResponse> {
      const started = performance.now();
      const signal = AbortSignal.timeout(request.timeoutMs);
      let url = await assertPublicUrl(rawUrl, options);
      let method = (request.method ?? 'GET') as Dispatcher.HttpMethod;
      let body = request.body;
      for (let hop = 0; ; hop++) {
        // undici's request API (not fetch: no WHATWG streams per response, a fraction of the CPU).
        const response = await agent
          .request({
            origin: url.origin,
            path: `${url.pathname}${url.search}`,
            method,
            headers: { ...(options.userAgent ? { 'user-agent': options.userAgent } : {}), ...request.headers },
            body,
            signal,
          })
          .catch((error: unknown) => {
            // A refusal at connect time (the DNS answer changed since the check) may arrive wrapped
            // as the error's cause: surface it, so every caller treats it as a refused URL.
            const cause = (error as { cause?: unknown }).cause;
            throw cause instanceof UrlRefusedError ? cause : error;
          });
        const headers = flatHeaders(response.headers);
        const location = headers.location;
        if (response.statusCode >= 300 && response.statusCode < 400 && location && hop < (request.maxRedirects ?? 3)) {
          await response.body.dump().catch(() => undefined);
          url = await assertPublicUrl(new URL(location, url).toString(), options);
          if (response.statusCode === 303 || ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')) {
            method = 'GET';
            body = undefined;
          }
          continue;
        }
        const { body: bytes, truncated } = await readCapped(response.body, request.maxBytes);
        return {
          status: response.statusCode,
          headers,
          body: bytes,
          truncated,
          durationMs: Math.round(performance.now() - started),
          url: url.toString(),
        };
      }
    },
    close: () => agent.close(),
  };
}

export type OutboundClient = ReturnType<typeof createOutboundClient>;

/** For PUT/PATCH handlers: a refused URL becomes 422 validation_failed naming the field. */
export async function assertUrlField(path: string, raw: string, options: { allowPrivate: boolean }): Promise<void> {
  try {
    await assertPublicUrl(raw, options);
  } catch (error) {
    if (error instanceof UrlRefusedError) throw invalidField(path, `URL ${error.message}`);
    throw error;
  }
}
