import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type nodemailer from 'nodemailer';
import { randomToken } from './secrets.ts';

// Outgoing mail: through SMTP (nodemailer) when SMTP_URL is set, otherwise each message is
// written as JSON to DATA_DIR/mail/ so a local install (and the tests) can read it.

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** Machine-readable extras (the token and link), kept in the JSON file for local use. */
  meta?: Record<string, string>;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

export function createMailer(options: { smtpUrl?: string; from: string; dataDir: string }): Mailer {
  if (options.smtpUrl) {
    // Loaded only with SMTP_URL (synchronously, a CommonJS package): a static import cost every
    // start-up its load (docs/decisions.md, "Start-up").
    const mail = createRequire(import.meta.url)('nodemailer') as typeof nodemailer;
    const transport = mail.createTransport(options.smtpUrl);
    return {
      async send(message) {
        await transport.sendMail({ from: options.from, to: message.to, subject: message.subject, text: message.text });
      },
    };
  }
  const dir = path.join(options.dataDir, 'mail');
  return {
    async send(message) {
      await fs.mkdir(dir, { recursive: true });
      const name = `${new Date().toISOString().replaceAll(':', '-')}-${randomToken('', 6)}.json`;
      await fs.writeFile(path.join(dir, name), JSON.stringify({ from: options.from, ...message }, null, 2));
    },
  };
}
