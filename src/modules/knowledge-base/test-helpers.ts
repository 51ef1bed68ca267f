import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestApp } from '../../../test/support/app.ts';
import type { TestUser } from '../../../test/support/fixtures.ts';
import { type FormPart, multipartForm } from '../../../test/support/multipart.ts';

// Helpers shared by this module's tests and benchmark: multipart bodies, fixtures, quick setup.

export const FIXTURES = path.join(import.meta.dirname, 'fixtures');

export interface QualityQuestion {
  document: string;
  question: string;
  phrase: string;
}

export const QUESTIONS: QualityQuestion[] = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'questions.json'), 'utf8'));

export const squash = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();

/** A multipart/form-data request: text fields and at most one file (its part named `file` unless said). */
export function multipart(fields: Record<string, string>, file?: { field?: string; filename: string; contentType: string; data: Buffer }) {
  const parts: FormPart[] = Object.entries(fields).map(([name, value]) => ({ name, value }));
  if (file) parts.push({ name: file.field ?? 'file', filename: file.filename, contentType: file.contentType, data: file.data });
  return multipartForm(parts);
}

export async function createBase(t: TestApp, user: TestUser, body: Record<string, unknown> = { name: 'Support docs' }): Promise<{ id: string }> {
  const res = await t.request({ method: 'POST', url: '/v1/knowledge-base', token: user.accessToken, workspaceId: user.workspaceId, payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

export async function addText(t: TestApp, user: TestUser, baseId: string, title: string, text: string): Promise<{ id: string; chunk_count: number }> {
  const res = await t.request({ method: 'POST', url: `/v1/knowledge-base/${baseId}/sources`, token: user.accessToken, workspaceId: user.workspaceId, payload: { type: 'text', title, text } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

const CONTENT_TYPES: Record<string, string> = { md: 'text/markdown', html: 'text/html', pdf: 'application/pdf', txt: 'text/plain', csv: 'text/csv' };

export async function uploadFixture(t: TestApp, user: TestUser, baseId: string, filename: string) {
  const extension = filename.split('.').pop() ?? '';
  const body = multipart({}, { filename, contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream', data: fs.readFileSync(path.join(FIXTURES, filename)) });
  const res = await t.request({ method: 'POST', url: `/v1/knowledge-base/${baseId}/sources`, token: user.accessToken, workspaceId: user.workspaceId, ...body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

export async function query(t: TestApp, user: TestUser, baseId: string, q: string, topK?: number) {
  const res = await t.request({ method: 'POST', url: `/v1/knowledge-base/${baseId}/query`, token: user.accessToken, workspaceId: user.workspaceId, payload: { query: q, ...(topK ? { top_k: topK } : {}) } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().results as Array<{ source_id: string; chunk_id: string; text: string; score: number }>;
}
