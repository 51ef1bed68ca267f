import fs from 'node:fs';
import path from 'node:path';
import type { TestApp } from './app.ts';

// Mail the local (file) mailer wrote for a test app: DATA_DIR/mail/*.json, oldest first.

export interface SentMail<Meta = Record<string, string>> {
  to: string;
  subject: string;
  text: string;
  meta?: Meta;
}

export function sentMails<Meta = Record<string, string>>(t: TestApp): SentMail<Meta>[] {
  const dir = path.join(t.dataDir, 'mail');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as SentMail<Meta>);
}
