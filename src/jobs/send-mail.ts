/**
 * Notification e-mails (docs/api.md#notifications) through nodemailer: one connection per message,
 * to the server the operator configured (`--smtp-url`). `smtps://` speaks TLS from the start;
 * `smtp://` upgrades with STARTTLS when the server offers it (required with `?starttls=required`,
 * never with `?starttls=never`). `user:password@` in the URL signs in, but the password is only sent
 * over TLS or to loopback. nodemailer is imported on the first message, so roles that never send
 * mail never load it.
 */
import { parseSmtpUrl } from '../domain/smtp-url.ts';

export interface SmtpSettings {
  /** smtp://[user:password@]host[:port][?starttls=required|never] or smtps://… */
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

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** Sends one message; resolves once the server accepted it for delivery, or rejects saying why. */
export async function sendMail(settings: SmtpSettings, message: MailMessage): Promise<void> {
  const url = parseSmtpUrl(settings.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const secure = url.protocol === 'smtps:';
  const startTls = url.searchParams.get('starttls');
  const signsIn = url.username !== '';
  // A password leaves the machine only encrypted: without TLS from the start, STARTTLS is required.
  const mustUpgrade = startTls === 'required' || (signsIn && !secure && !isLoopback(host));
  if (mustUpgrade && !secure && startTls === 'never')
    throw new Error('refusing to send the SMTP password unencrypted: use smtps:// or a server offering STARTTLS');
  const { createTransport } = await import('nodemailer');
  const transport = createTransport({
    host,
    port: Number(url.port || (secure ? 465 : 25)),
    secure,
    requireTLS: !secure && mustUpgrade,
    ignoreTLS: !secure && startTls === 'never',
    auth: signsIn ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    connectionTimeout: settings.timeoutMs,
    greetingTimeout: settings.timeoutMs,
    socketTimeout: settings.timeoutMs,
    // nodemailer's own logging would print the conversation; errors below carry what went wrong.
    logger: false,
    debug: false,
  });
  try {
    await transport.sendMail({
      from: settings.from,
      to: message.to,
      subject: message.subject.replace(/[\r\n]+/g, ' '),
      text: message.text,
      headers: { 'Auto-Submitted': 'auto-generated' },
    });
  } catch (error) {
    throw new Error(`the SMTP server did not take the message: ${(error as Error).message}`, { cause: error });
  } finally {
    transport.close();
  }
}
