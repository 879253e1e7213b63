/**
 * The seam through which notifications leave the server (docs/api.md#notifications): e-mail
 * through the configured SMTP server, and POSTs under the rules of run-finished hooks. The server
 * role wires the real ones (jobs/notification-senders.ts); a context without them sends nothing.
 */
export interface OutgoingMail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

export interface Senders {
  /** Sends one e-mail, resolving once the SMTP server accepted it; null when no SMTP server is configured. */
  readonly mail: ((message: OutgoingMail) => Promise<void>) | null;
  /** POSTs `body` to `url`; resolves with the answer's status, rejects when refused or unreachable. */
  post(url: string, body: string, contentType: string): Promise<number>;
}
