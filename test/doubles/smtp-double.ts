import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  /** The AUTH PLAIN identity and password, as the server decoded them. */
  auth?: { user: string; pass: string };
  from: string;
  to: string[];
  data: string;
}

/**
 * A loopback SMTP server (RFC 5321) that accepts every message: EHLO advertising AUTH PLAIN (and
 * no STARTTLS), AUTH PLAIN, MAIL FROM, RCPT TO, DATA with dot-unstuffing, RSET, NOOP, QUIT.
 */
export async function startSmtpDouble(): Promise<{ port: number; mails: ReceivedMail[]; close(): Promise<void> }> {
  const mails: ReceivedMail[] = [];
  const server = net.createServer((socket) => {
    let buffer = '';
    let current: ReceivedMail = { from: '', to: [], data: '' };
    let inData = false;
    let auth: ReceivedMail['auth'];
    const reply = (line: string) => socket.write(`${line}\r\n`);
    reply('220 smtp-double ESMTP');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      let eol: number;
      while ((eol = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            mails.push({ ...current, auth });
            current = { from: '', to: [], data: '' };
            reply('250 2.0.0 queued');
          } else {
            current.data += (line.startsWith('..') ? line.slice(1) : line) + '\r\n';
          }
          continue;
        }
        const verb = line.split(' ')[0].toUpperCase();
        if (verb === 'EHLO') {
          socket.write('250-smtp-double\r\n250-AUTH PLAIN\r\n250 8BITMIME\r\n');
        } else if (verb === 'AUTH') {
          const [, user, pass] = Buffer.from(line.split(' ')[2] ?? '', 'base64').toString().split('\0');
          auth = { user, pass };
          reply('235 2.7.0 authenticated');
        } else if (verb === 'MAIL') {
          current.from = line.match(/<([^>]*)>/)?.[1] ?? '';
          reply('250 2.1.0 ok');
        } else if (verb === 'RCPT') {
          current.to.push(line.match(/<([^>]*)>/)?.[1] ?? '');
          reply('250 2.1.5 ok');
        } else if (verb === 'DATA') {
          inData = true;
          reply('354 end with <CRLF>.<CRLF>');
        } else if (verb === 'QUIT') {
          reply('221 2.0.0 bye');
          socket.end();
        } else if (verb === 'RSET' || verb === 'NOOP') {
          reply('250 2.0.0 ok');
        } else {
          reply('502 5.5.2 not implemented');
        }
      }
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    mails,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
