import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { buildTestApp } from './support/app.ts';
import { uniqueEmail } from './support/fixtures.ts';

// Mail (platform/mailer.ts): through SMTP (nodemailer) when SMTP_URL is set, else JSON files in
// DATA_DIR/mail/. The SMTP path is tested against a small local server that speaks the protocol
// (RFC 5321: greeting, EHLO, MAIL, RCPT, DATA with dot-stuffing, QUIT).

interface Received {
  from: string;
  to: string[];
  data: string;
}

async function fakeSmtpServer(): Promise<{ port: number; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = net.createServer((socket) => {
    let buffer = '';
    let inData = false;
    let current: Received = { from: '', to: [], data: '' };
    const reply = (line: string) => socket.write(`${line}\r\n`);
    reply('220 fake-smtp ESMTP ready');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      while (true) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end === -1) return;
          current.data = buffer.slice(0, end).replace(/^\.\./gm, '.');
          buffer = buffer.slice(end + 5);
          inData = false;
          received.push(current);
          current = { from: '', to: [], data: '' };
          reply('250 2.0.0 queued');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol === -1) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO') reply('250-fake-smtp\r\n250 8BITMIME');
        else if (verb === 'HELO') reply('250 fake-smtp');
        else if (verb === 'MAIL') {
          current.from = /<([^>]*)>/.exec(line)?.[1] ?? '';
          reply('250 2.1.0 ok');
        } else if (verb === 'RCPT') {
          current.to.push(/<([^>]*)>/.exec(line)?.[1] ?? '');
          reply('250 2.1.5 ok');
        } else if (verb === 'DATA') {
          inData = true;
          reply('354 end with <CRLF>.<CRLF>');
        } else if (verb === 'QUIT') {
          reply('221 2.0.0 bye');
          socket.end();
        } else if (verb === 'RSET' || verb === 'NOOP') reply('250 ok');
        else reply('502 5.5.2 not implemented');
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { port, received, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('mail through SMTP when SMTP_URL is set', async () => {
  const smtp = await fakeSmtpServer();
  after(() => smtp.close());
  const t = await buildTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM: 'Platform <no-reply@platform.test>' } });

  it('sends the verification mail of a registration over SMTP, and writes no file', async () => {
    const email = uniqueEmail('smtp');
    const res = await t.request({ method: 'POST', url: '/v1/auth/register', payload: { email, password: 'correct horse battery' } });
    assert.equal(res.statusCode, 201, res.body);
    const mails = smtp.received.filter((m) => m.to.includes(email));
    assert.equal(mails.length, 1, JSON.stringify(smtp.received.map((m) => m.to)));
    assert.equal(mails[0].from, 'no-reply@platform.test');
    assert.match(mails[0].data, /^Subject: Confirm your email address$/m);
    // The link may be folded by the transfer encoding: undo soft line breaks before matching.
    const body = mails[0].data.replace(/=\r\n/g, '').replace(/=3D/g, '=');
    assert.match(body, /http:\/\/localhost:3000\/verify-email\?token=ev_[A-Za-z0-9_-]+/);
    assert.equal(fs.existsSync(path.join(t.dataDir, 'mail')), false, 'nothing is written to DATA_DIR/mail/');
  });
});

describe('mail as files when SMTP_URL is unset', async () => {
  const t = await buildTestApp();

  it('writes each message as JSON to DATA_DIR/mail/, with its link and token', async () => {
    const email = uniqueEmail('file');
    const res = await t.request({ method: 'POST', url: '/v1/auth/register', payload: { email, password: 'correct horse battery' } });
    assert.equal(res.statusCode, 201, res.body);
    const dir = path.join(t.dataDir, 'mail');
    const mails = fs.readdirSync(dir).map((name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')));
    const mine = mails.filter((m) => m.to === email);
    assert.equal(mine.length, 1);
    assert.equal(mine[0].subject, 'Confirm your email address');
    assert.ok(mine[0].text.includes(mine[0].meta.link), 'the body carries the link');
    assert.match(mine[0].meta.link, /\/verify-email\?token=ev_/);
  });
});
