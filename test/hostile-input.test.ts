import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp } from './support/app.ts';
import { createApiKey, signUp } from './support/fixtures.ts';

// Hostile input the platform refuses for every route, present and future (input-guard.ts,
// array-bounds.ts, multipart-form.ts, the error renderer): each row of the hardening issue's table.

function assertProblem(res: LightMyRequestResponse, status: number, code: string) {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(res.json().code, code);
  assert.equal(res.json().status, status);
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

describe('hostile input', async () => {
  const t = await buildTestApp();
  const spec = t.app.swagger() as unknown as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>> };

  async function tenant() {
    const owner = await signUp(t);
    const key = await createApiKey(t, owner, 'admin');
    const as = { token: owner.accessToken, workspaceId: owner.workspaceId };
    const agent = (await t.request({ ...as, method: 'POST', url: '/v1/agents', payload: { name: 'Desk', prompt: 'You help.' } })).json();
    const kb = (await t.request({ ...as, method: 'POST', url: '/v1/knowledge-base', payload: { name: 'Facts' } })).json();
    return { owner, key, as, agent, kb };
  }

  it('NUL in any JSON string is 422 validation_failed naming the field, on every kind of body', async () => {
    const { owner, as, agent, kb } = await tenant();
    const cases: Array<{ method: 'POST' | 'PATCH' | 'PUT'; url: string; payload: Record<string, unknown>; path: string }> = [
      { method: 'POST', url: '/v1/auth/register', payload: { email: 'a\u0000b@example.com', password: 'correct horse battery' }, path: 'email' },
      { method: 'PATCH', url: '/v1/auth/me', payload: { name: 'Ada\u0000' }, path: 'name' },
      { method: 'POST', url: '/v1/workspaces', payload: { name: 'W\u0000' }, path: 'name' },
      { method: 'POST', url: '/v1/api-keys', payload: { name: 'k\u0000', scope: 'write' }, path: 'name' },
      { method: 'POST', url: '/v1/agents', payload: { name: 'a\u0000b', prompt: 'x' }, path: 'name' },
      { method: 'PATCH', url: `/v1/agents/${agent.id}`, payload: { metadata: { note: ['fine', 'bad\u0000'] } }, path: 'metadata.note.1' },
      { method: 'POST', url: `/v1/agents/${agent.id}/chat`, payload: { message: 'hi\u0000' }, path: 'message' },
      { method: 'POST', url: '/v1/knowledge-base', payload: { name: 'KB', description: '\u0000' }, path: 'description' },
      { method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources`, payload: { type: 'text', title: 'T', text: 'x\u0000y' }, path: 'text' },
      { method: 'POST', url: `/v1/knowledge-base/${kb.id}/query`, payload: { query: 'when\u0000' }, path: 'query' },
      { method: 'PATCH', url: `/v1/agents/${agent.id}`, payload: { metadata: { 'k\u0000': 1 } }, path: 'metadata.k\\u0000' },
    ];
    for (const c of cases) {
      const res = await t.request({ ...as, method: c.method, url: c.url, payload: c.payload });
      assertProblem(res, 422, 'validation_failed');
      assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), [c.path], `${c.method} ${c.url}`);
      assert.match(res.json().errors[0].message, /NUL/);
    }
    const me = await t.request({ ...as, method: 'GET', url: '/v1/auth/me' });
    assert.equal(me.json().name ?? null, null, 'nothing was written');
    assert.equal(owner.id, me.json().id);
  });

  it('a lone UTF-16 surrogate in any JSON string or key is 422 naming the field (jsonb would refuse it: was a 500)', async () => {
    const { as, agent } = await tenant();
    const cases: Array<{ method: 'POST' | 'PATCH'; url: string; payload: Record<string, unknown>; path: string }> = [
      { method: 'POST', url: '/v1/agents', payload: { name: 'A', prompt: 'x', metadata: { note: 'half \ud800 a pair' } }, path: 'metadata.note' },
      { method: 'PATCH', url: `/v1/agents/${agent.id}`, payload: { metadata: { list: ['ok', '\udfff'] } }, path: 'metadata.list.1' },
      { method: 'PATCH', url: `/v1/agents/${agent.id}`, payload: { name: 'low \udc00' }, path: 'name' },
      { method: 'PATCH', url: `/v1/agents/${agent.id}`, payload: { metadata: { 'k\ud800': 1 } }, path: 'metadata.k\ufffd' },
    ];
    for (const c of cases) {
      const res = await t.request({ ...as, method: c.method, url: c.url, payload: c.payload });
      assertProblem(res, 422, 'validation_failed');
      assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), [c.path], `${c.method} ${c.url}`);
      assert.match(res.json().errors[0].message, /surrogate/);
    }
    const query = await t.request({ ...as, method: 'GET', url: '/v1/agents?search=%ED%A0%80' });
    assert.ok(query.statusCode < 500, `a surrogate's bytes in a query: ${query.statusCode}`);
    const pair = await t.request({ ...as, method: 'PATCH', url: `/v1/agents/${agent.id}`, payload: { metadata: { face: 'smile \ud83d\ude00' } } });
    assert.equal(pair.statusCode, 200, 'a well-formed surrogate pair (an emoji) is text like any other');
    assert.equal(pair.json().metadata.face, 'smile \u{1F600}');
  });

  it('NUL in a query string is 422 naming the parameter', async () => {
    const { as } = await tenant();
    const res = await t.request({ ...as, method: 'GET', url: '/v1/agents?cursor=%00' });
    assertProblem(res, 422, 'validation_failed');
    assert.deepEqual(res.json().errors, [{ path: 'query.cursor', message: 'must not contain the NUL character (U+0000)' }]);
  });

  it('%00 in a path parameter is 404 not_found on every operation that takes one', async () => {
    const { as } = await tenant();
    let checked = 0;
    for (const [path, item] of Object.entries(spec.paths)) {
      if (!path.includes('{')) continue;
      for (const method of Object.keys(item).filter((m) => METHODS.includes(m))) {
        const url = path.replace(/\{[^}]+\}/g, 'a%00b');
        const res = await t.request({ ...as, method: method.toUpperCase() as 'GET', url, payload: method === 'get' || method === 'delete' ? undefined : {} });
        assertProblem(res, 404, 'not_found');
        checked++;
      }
    }
    assert.ok(checked >= 31, `${checked} operations with path parameters`);
  });

  it('JSON nested deeper than 32 levels is 422, at most 32 is taken', async () => {
    const { as, agent } = await tenant();
    const nest = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    const deep = await t.request({ ...as, method: 'PATCH', url: `/v1/agents/${agent.id}`, payload: `{"metadata":${nest(5000)}}`, headers: { 'content-type': 'application/json' } });
    assertProblem(deep, 422, 'validation_failed');
    assert.match(deep.json().errors[0].path, /^metadata(\.a)+$/);
    assert.match(deep.json().errors[0].message, /deeper than 32 levels/);
    const args = await t.request({ ...as, method: 'POST', url: `/v1/agents/${agent.id}/test-function`, payload: `{"name":"f","arguments":${nest(5000)}}`, headers: { 'content-type': 'application/json' } });
    assertProblem(args, 422, 'validation_failed');
    // The body itself is level 0 and metadata level 1: 31 more levels reach the limit.
    const fits = await t.request({ ...as, method: 'PATCH', url: `/v1/agents/${agent.id}`, payload: `{"metadata":{"m":${nest(30)}}}`, headers: { 'content-type': 'application/json' } });
    assert.equal(fits.statusCode, 200, fits.body);
    const arrays = await t.request({ ...as, method: 'PATCH', url: `/v1/agents/${agent.id}`, payload: `{"metadata":{"m":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`, headers: { 'content-type': 'application/json' } });
    assertProblem(arrays, 422, 'validation_failed');
  });

  it('malformed multipart is 400 problem+json; NUL in a file name is 422', async () => {
    const { as, kb } = await tenant();
    const url = `/v1/knowledge-base/${kb.id}/sources`;
    const part = (boundary: string, filename: string, content: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`;
    const malformed: Array<[string, string]> = [
      ['multipart/form-data', part('foo', 'a.txt', 'hello')],
      ['multipart/form-data; boundary=bar', part('foo', 'a.txt', 'hello')],
      ['multipart/form-data; boundary=foo', '--foo\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhel'],
      ['multipart/form-data; boundary=foo', '--foo\r\nnot a header\r\n\r\nx\r\n--foo--\r\n'],
    ];
    for (const [contentType, payload] of malformed) {
      const res = await t.request({ ...as, method: 'POST', url, payload, headers: { 'content-type': contentType } });
      assert.ok([400, 422].includes(res.statusCode), `${contentType}: ${res.statusCode} ${res.body}`);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    }
    const nulName = await t.request({ ...as, method: 'POST', url, payload: part('b', 'a\u0000.txt', 'hello'), headers: { 'content-type': 'multipart/form-data; boundary=b' } });
    assertProblem(nulName, 422, 'validation_failed');
    assert.equal(nulName.json().errors[0].path, 'file');
    const nulTitle = await t.request({
      ...as,
      method: 'POST',
      url,
      payload: `--b\r\nContent-Disposition: form-data; name="title"\r\n\r\nT\u0000\r\n${part('b', 'a.txt', 'hello')}`,
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
    });
    assertProblem(nulTitle, 422, 'validation_failed');
    assert.equal(nulTitle.json().errors[0].path, 'title');
    const sources = await t.request({ ...as, method: 'GET', url });
    assert.deepEqual(sources.json().data, [], 'no source was created by a refused upload');
    // NUL bytes inside a document are binary noise of the file, not a field the caller typed.
    for (const filename of ['notes.txt', 'notes.md', 'page.html', 'table.csv']) {
      const res = await t.request({ ...as, method: 'POST', url, payload: part('b', filename, 'We open\u0000 at nine.\n'), headers: { 'content-type': 'multipart/form-data; boundary=b' } });
      assert.ok(res.statusCode < 500, `${filename}: ${res.statusCode} ${res.body}`);
      if (res.statusCode >= 400) assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    }
  });

  it("the router's own refusals are problem+json with a stable code", async () => {
    const { as } = await tenant();
    const badUrl = await t.request({ ...as, method: 'GET', url: '/v1/agents/%E0%A4%A' });
    assertProblem(badUrl, 400, 'bad_request');
    const long = await t.request({ ...as, method: 'GET', url: `/v1/agents/${'a'.repeat(300)}` });
    assertProblem(long, 414, 'uri_too_long');
    assert.ok(long.json().request_id);
  });

  it('a huge invalid array is one small 422: its maxItems, not an error per item', async () => {
    const { as } = await tenant();
    const events = Array.from({ length: 200_000 }, () => 'x');
    const res = await t.request({ ...as, method: 'PUT', url: '/v1/webhooks', payload: { webhook_url: 'https://example.com/h', events } });
    assertProblem(res, 422, 'validation_failed');
    assert.ok(res.body.length < 2_000, `${res.body.length} bytes`);
    assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), ['events']);
    assert.match(res.json().errors[0].message, /50/);
    // Within bounds, each bad item is still named.
    const few = await t.request({ ...as, method: 'PUT', url: '/v1/webhooks', payload: { webhook_url: 'https://example.com/h', events: ['nope', 'call.ended'] } });
    assertProblem(few, 422, 'validation_failed');
    assert.equal(few.json().errors[0].path, 'events.0');
  });

  it('lists at most 20 field errors, with error_count giving the total', async () => {
    const { as } = await tenant();
    const payload: Record<string, string> = { name: 'A', prompt: 'B' };
    for (let i = 0; i < 30; i++) payload[`unknown_${i}`] = 'x';
    const res = await t.request({ ...as, method: 'POST', url: '/v1/agents', payload });
    assertProblem(res, 422, 'validation_failed');
    assert.equal(res.json().errors.length, 20);
    assert.equal(res.json().error_count, 30);
    const one = await t.request({ ...as, method: 'POST', url: '/v1/agents', payload: { name: 'A', prompt: 'B', typo: 1 } });
    assert.equal(one.json().error_count, undefined, 'error_count only when errors is cut');
    const longKey = await t.request({ ...as, method: 'POST', url: '/v1/agents', payload: { name: 'A', prompt: 'B', ['k'.repeat(100_000)]: 1 } });
    assertProblem(longKey, 422, 'validation_failed');
    assert.ok(longKey.body.length < 3_000, `a 100,000-character key is not echoed whole (${longKey.body.length} bytes)`);
  });

  it('bounds every array and every free-form object of every request body in its schema', () => {
    const unbounded: string[] = [];
    const visit = (schema: unknown, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      const s = schema as Record<string, unknown>;
      if (s.type === 'array' && typeof s.maxItems !== 'number') unbounded.push(`${where}: array without maxItems`);
      if (s.type === 'object' && s.additionalProperties !== false && s.additionalProperties !== undefined && typeof s.maxProperties !== 'number') {
        unbounded.push(`${where}: open object without maxProperties`);
      }
      if (s.type === 'object' && s.patternProperties && typeof s.maxProperties !== 'number') unbounded.push(`${where}: open object without maxProperties`);
      for (const [key, value] of Object.entries(s)) {
        if (key === 'properties' || key === 'patternProperties') {
          for (const [name, child] of Object.entries(value as Record<string, unknown>)) visit(child, `${where}.${name}`);
        } else if (Array.isArray(value)) {
          for (const [i, child] of value.entries()) visit(child, `${where}.${key}[${i}]`);
        }
        else if (typeof value === 'object') visit(value, `${where}.${key}`);
      }
    };
    for (const [path, item] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [type, content] of Object.entries(op.requestBody?.content ?? {})) visit(content.schema, `${method.toUpperCase()} ${path} (${type})`);
      }
    }
    assert.deepEqual(unbounded, []);
  });
});

describe('requests the HTTP parser refuses', async () => {
  const t = await buildTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = t.app.server.address() as AddressInfo;

  function rawExchange(request: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk) => {
        answer += chunk.toString('latin1');
      });
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
      socket.end(request);
    });
  }

  it('answers a malformed request line and oversized headers with problem+json', async () => {
    for (const [request, status, code] of [
      ['NOT AN HTTP REQUEST\r\n\r\n', 400, 'bad_request'],
      [`GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ] as const) {
      const answer = await rawExchange(request);
      const [head, body] = answer.split('\r\n\r\n');
      assert.match(head, new RegExp(`^HTTP/1.1 ${status} `));
      assert.match(head, /content-type: application\/problem\+json/i);
      assert.equal(JSON.parse(body).code, code);
      assert.equal(JSON.parse(body).status, status);
    }
  });
});
