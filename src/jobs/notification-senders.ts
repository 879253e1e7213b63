/**
 * The senders of notifications (services/senders.ts): e-mail through the SMTP server of the
 * settings, POSTs through hook-sender.ts, under the same destination rules as run-finished hooks.
 */
import type { HookDestinationRules } from '../domain/hook-destinations.ts';
import type { Senders } from '../services/senders.ts';
import { type Resolve, postHook } from './hook-sender.ts';
import { sendMail } from './smtp.ts';

export const SEND_TIMEOUT_MS = 10_000;

export interface SenderSettings {
  /** smtp:// or smtps:// URL; undefined: e-mail cannot be sent. */
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  readonly rules: HookDestinationRules;
  readonly resolve?: Resolve;
  readonly timeoutMs?: number;
}

export function notificationSenders(settings: SenderSettings): Senders {
  const timeoutMs = settings.timeoutMs ?? SEND_TIMEOUT_MS;
  const { smtpUrl } = settings;
  return {
    mail:
      smtpUrl === undefined
        ? null
        : (message) => sendMail({ url: smtpUrl, from: settings.mailFrom, timeoutMs }, message),
    post: (url, body, contentType) =>
      postHook({ url, body, contentType, timeoutMs, rules: settings.rules, resolve: settings.resolve }),
  };
}
