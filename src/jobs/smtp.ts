/**
 * A small SMTP client for notification e-mails (docs/api.md#notifications): one connection per
 * message, to the server the operator configured (`--smtp-url`). `smtps://` speaks TLS from the
 * start; `smtp://` upgrades with STARTTLS when the server offers it (required with `?starttls=required`).
 * `user:password@` in the URL signs in with AUTH PLAIN, which is only sent over TLS or to loopback.
 * Addresses were checked when the subscription was made; the subject and body are ours.
 */
import net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';
import { parseSmtpUrl } from '../domain/smtp-url.ts';

export interface SmtpSettings {
  /** smtp://[user:password@]host[:port][?starttls=required] or smtps://… */
  readonly url: string;
  /** The sender address (MAIL FROM and From:). */
  readonly from: string;
  readonly timeoutMs: number;
}

export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

/** One SMTP conversation: reads replies line by line, a reply ending at a line `NNN text`. */
class Conversation {
  private buffer = '';
  private lines: string[] = [];
  private waiting: ((line: string) => void) | null = null;
  private failure: Error | null = null;

  constructor(public socket: net.Socket) {
    this.listen(socket);
  }

  listen(socket: net.Socket): void {
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let end = this.buffer.indexOf('\r\n'); end >= 0; end = this.buffer.indexOf('\r\n')) {
        this.lines.push(this.buffer.slice(0, end));
        this.buffer = this.buffer.slice(end + 2);
      }
      if (this.buffer.length > 64 * 1024) socket.destroy(new Error('the SMTP server sent an over-long line'));
      this.wake();
    });
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('the SMTP server closed the connection')));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiting;
    if (waiting === null) return;
    if (this.lines.length > 0) {
      this.waiting = null;
      waiting(this.lines.shift()!);
    } else if (this.failure !== null) {
      this.waiting = null;
      waiting('');
    }
  }

  private nextLine(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.waiting = (line) => (line === '' && this.failure !== null ? reject(this.failure) : resolve(line));
      this.wake();
    });
  }

  /** The next reply: its code and its lines' texts; a code outside `expected` is an error. */
  async reply(expected: readonly number[], what: string): Promise<string[]> {
    const texts: string[] = [];
    for (;;) {
      const line = await this.nextLine();
      const match = /^(\d{3})([ -])(.*)$/.exec(line);
      if (match === null) throw new Error(`the SMTP server answered ${what} with '${line.slice(0, 200)}'`);
      texts.push(match[3]!);
      if (match[2] === ' ') {
        const code = Number(match[1]);
        if (!expected.includes(code))
          throw new Error(`the SMTP server refused ${what}: ${match[1]} ${texts.join(' ').slice(0, 300)}`);
        return texts;
      }
    }
  }

  async command(line: string, expected: readonly number[], what = line.split(' ')[0]!): Promise<string[]> {
    this.socket.write(`${line}\r\n`);
    return this.reply(expected, what);
  }
}

function connect(url: URL, timeoutMs: number): Promise<net.Socket> {
  const secure = url.protocol === 'smtps:';
  const port = Number(url.port || (secure ? 465 : 25));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    const socket = secure
      ? tls.connect({ host, port, servername: net.isIP(host) === 0 ? host : undefined }, () => resolve(socket))
      : net.connect({ host, port }, () => resolve(socket));
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error(`the SMTP server did not answer within ${timeoutMs} ms`)),
    );
    socket.once('error', reject);
  });
}

function upgrade(socket: net.Socket, host: string, timeoutMs: number): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    socket.removeAllListeners('data');
    socket.removeAllListeners('close');
    socket.removeAllListeners('error');
    const secured = tls.connect({ socket, servername: net.isIP(host) === 0 ? host : undefined }, () =>
      resolve(secured),
    );
    secured.setTimeout(timeoutMs, () =>
      secured.destroy(new Error(`the SMTP server did not answer within ${timeoutMs} ms`)),
    );
    secured.once('error', reject);
  });
}

/** Lines of the body with CRLF endings, a leading dot doubled (RFC 5321 §4.5.2). */
function dotStuffed(text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => (line.startsWith('.') ? `.${line}` : line))
    .join('\r\n');
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** Sends one message; resolves once the server accepted it for delivery, or rejects saying why. */
export async function sendMail(settings: SmtpSettings, message: MailMessage): Promise<void> {
  const url = parseSmtpUrl(settings.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const socket = await connect(url, settings.timeoutMs);
  const talk = new Conversation(socket);
  try {
    await talk.reply([220], 'the greeting');
    const hello = `EHLO ${os.hostname().replace(/[^A-Za-z0-9.-]/g, '') || 'devicecloud'}`;
    let offers = await talk.command(hello, [250]);
    let secure = url.protocol === 'smtps:';
    const startTls = url.searchParams.get('starttls');
    if (!secure && offers.some((line) => /^STARTTLS\b/i.test(line)) && startTls !== 'never') {
      await talk.command('STARTTLS', [220]);
      talk.listen(await upgrade(talk.socket, host, settings.timeoutMs));
      secure = true;
      offers = await talk.command(hello, [250]);
    }
    if (!secure && startTls === 'required')
      throw new Error('the SMTP server does not offer STARTTLS, and the SMTP URL requires it');
    if (url.username !== '') {
      if (!secure && !isLoopback(host))
        throw new Error('refusing to send the SMTP password unencrypted: use smtps:// or a server offering STARTTLS');
      const plain = Buffer.from(
        `\0${decodeURIComponent(url.username)}\0${decodeURIComponent(url.password)}`,
        'utf8',
      ).toString('base64');
      await talk.command(`AUTH PLAIN ${plain}`, [235], 'AUTH');
    }
    await talk.command(`MAIL FROM:<${settings.from}>`, [250]);
    await talk.command(`RCPT TO:<${message.to}>`, [250, 251], 'RCPT');
    await talk.command('DATA', [354]);
    const headers = [
      `From: ${settings.from}`,
      `To: ${message.to}`,
      `Subject: ${message.subject.replace(/[\r\n]+/g, ' ')}`,
      `Date: ${new Date().toUTCString()}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=UTF-8',
      'Content-Transfer-Encoding: 8bit',
      'Auto-Submitted: auto-generated',
    ];
    talk.socket.write(`${headers.join('\r\n')}\r\n\r\n${dotStuffed(message.text)}\r\n.\r\n`);
    await talk.reply([250], 'the message');
    await talk.command('QUIT', [221]).catch(() => undefined);
  } finally {
    talk.socket.destroy();
  }
}
