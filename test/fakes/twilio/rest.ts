import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { NumberInventory, RestAnswer } from './numbers.ts';
import { API_VERSION, rfc2822, twilioError } from './support.ts';
import type { Switchboard } from './switchboard.ts';
import type { RestRequestRecord } from './types.ts';

// The REST API 2010-04-01 over HTTP: HTTP Basic auth with the account SID and auth token, form-encoded
// bodies, Twilio's JSON resources and its error JSON ({code, message, more_info, status}).

const MAX_BODY_BYTES = 1024 * 1024;
const SID = '[0-9a-f]{32}';

export interface RestDeps {
  accountSid: string;
  authToken: string;
  requests: RestRequestRecord[];
  switchboard: Switchboard;
  inventory: NumberInventory;
  createdAt: Date;
}

type Handler = (match: RegExpExecArray, params: URLSearchParams) => RestAnswer | undefined;
type Route = { path: RegExp; methods: Record<string, Handler> };

function routes(deps: RestDeps): Route[] {
  const { switchboard, inventory } = deps;
  return [
    { path: /^\.json$/, methods: { GET: () => ({ status: 200, body: accountJson(deps) }) } },
    { path: /^\/Calls\.json$/, methods: { GET: (_, params) => switchboard.list(params), POST: (_, params) => switchboard.create(params) } },
    {
      path: new RegExp(`^/Calls/(CA${SID})\\.json$`),
      methods: { GET: (match) => switchboard.fetch(match[1]), POST: (match, params) => switchboard.update(match[1], params) },
    },
    { path: /^\/IncomingPhoneNumbers\.json$/, methods: { GET: (_, params) => inventory.list(params), POST: (_, params) => inventory.buy(params) } },
    {
      path: new RegExp(`^/IncomingPhoneNumbers/(PN${SID})\\.json$`),
      methods: {
        GET: (match) => inventory.fetch(match[1]),
        POST: (match, params) => inventory.update(match[1], params),
        DELETE: (match) => inventory.release(match[1]),
      },
    },
    { path: /^\/AvailablePhoneNumbers\/([A-Z]{2})\/Local\.json$/, methods: { GET: (match, params) => inventory.searchLocal(match[1], params) } },
  ];
}

export function createRestHandler(deps: RestDeps): RequestListener {
  const table = routes(deps);
  return (request, response) => {
    readBody(request)
      .then((body) => respond(response, answer(deps, table, request, body)))
      .catch((error: Error) => respond(response, { status: 500, body: twilioError(500, 20500, `Internal Server Error: ${error.message}`) }));
  };
}

function answer(deps: RestDeps, table: Route[], request: IncomingMessage, body: string | undefined): RestAnswer {
  const method = request.method ?? 'GET';
  const url = new URL(request.url ?? '/', 'http://fake.twilio');
  if (body === undefined) return { status: 413, body: twilioError(413, 20400, 'Request entity too large') };
  const params = new URLSearchParams(url.search);
  if (String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    for (const [name, value] of new URLSearchParams(body)) params.append(name, value);
  }
  deps.requests.push({ method, path: url.pathname, params: recordParams(params) });
  if (!authorized(deps, request.headers.authorization)) return { status: 401, body: twilioError(401, 20003, 'Authenticate') };
  const notFound = { status: 404, body: twilioError(404, 20404, `The requested resource ${url.pathname} was not found`) };
  const accountPrefix = `/${API_VERSION}/Accounts/${deps.accountSid}`;
  if (!url.pathname.startsWith(accountPrefix)) return notFound;
  const rest = url.pathname.slice(accountPrefix.length);
  for (const route of table) {
    const match = route.path.exec(rest);
    if (!match) continue;
    const handler = route.methods[method];
    if (!handler) return { status: 405, body: twilioError(405, 20004, 'Method not allowed') };
    return handler(match, params) ?? notFound;
  }
  return notFound;
}

function authorized(deps: RestDeps, header: string | undefined): boolean {
  const basic = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!basic) return false;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  return decoded === `${deps.accountSid}:${deps.authToken}`;
}

/** Repeated parameters (StatusCallbackEvent …) become arrays. */
function recordParams(params: URLSearchParams): Record<string, string | string[]> {
  const record: Record<string, string | string[]> = {};
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name);
    record[name] = values.length === 1 ? values[0] : values;
  }
  return record;
}

/** The body as text, or undefined when it is larger than any Twilio request can be. */
function readBody(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function respond(response: ServerResponse, result: RestAnswer): void {
  if (result.status === 204 || result.body === undefined) {
    response.writeHead(result.status).end();
    return;
  }
  const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8' };
  if (result.status === 401) headers['WWW-Authenticate'] = 'Basic realm="Twilio API"';
  response.writeHead(result.status, headers).end(JSON.stringify(result.body));
}

function accountJson(deps: RestDeps): Record<string, unknown> {
  const uri = `/${API_VERSION}/Accounts/${deps.accountSid}`;
  return {
    sid: deps.accountSid,
    owner_account_sid: deps.accountSid,
    friendly_name: 'Fake Twilio account',
    status: 'active',
    type: 'Full',
    date_created: rfc2822(deps.createdAt),
    date_updated: rfc2822(deps.createdAt),
    uri: `${uri}.json`,
    subresource_uris: { calls: `${uri}/Calls.json`, incoming_phone_numbers: `${uri}/IncomingPhoneNumbers.json`, available_phone_numbers: `${uri}/AvailablePhoneNumbers.json` },
  };
}
