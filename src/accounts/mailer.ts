import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';

export interface Message {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: Message): Promise<void>;
}

/** Over SMTP when SMTP_URL is set (smtp:// or smtps://, credentials in the URL). */
class SmtpMailer implements Mailer {
  private readonly transport;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport(url);
  }

  async send(message: Message): Promise<void> {
    await this.transport.sendMail({ from: this.from, ...message });
  }
}

/**
 * Without SMTP, each message is one RFC 5322 file in the outbox (nodemailer composes it), for
 * development and tests. The files hold sign-in links, so they are readable by the owner only.
 */
class OutboxMailer implements Mailer {
  private readonly transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

  constructor(
    private readonly dir: string,
    private readonly from: string,
  ) {}

  async send(message: Message): Promise<void> {
    const info = await this.transport.sendMail({ from: this.from, ...message });
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`;
    await fs.writeFile(path.join(this.dir, name), info.message as Buffer, { mode: 0o600 });
  }
}

export function createMailer(options: { smtpUrl?: string; from: string; outboxDir: string }): Mailer {
  return options.smtpUrl ? new SmtpMailer(options.smtpUrl, options.from) : new OutboxMailer(options.outboxDir, options.from);
}
