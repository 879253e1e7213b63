/**
 * Notification subscriptions (docs/api.md#notifications): a user asks to be told about run events,
 * by e-mail, a Slack incoming webhook or a webhook of their own, for all their projects or one.
 * Channels and scopes are the established API's names; only the scopes a run here can produce are
 * accepted, so that no subscription waits for an event that never comes.
 */
import { InvalidParameterError } from './errors.ts';
import type { ListSpec } from './list-query.ts';
import { type HookDestinationRules, hostRefusal } from './hook-destinations.ts';

/** In the established API's order: an enum's `id` is its position (APIEnum's ordinal). */
export const NOTIFICATION_CHANNELS = ['SLACK', 'EMAIL', 'WEBHOOK'] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];

/** The established API's first four scopes: the run events. Its others (maintenance, news, plans) have no source here. */
export const NOTIFICATION_SCOPES = ['ALL', 'TEST_RUN', 'TEST_RUN_FAILURE', 'TEST_RUN_SUCCEEDED'] as const;
export type NotificationScope = (typeof NOTIFICATION_SCOPES)[number];

/** What a finished run adds up to, as run-finished hooks report it (`result`). */
export type RunResult = 'SUCCEEDED' | 'FAILED' | 'WARNING' | 'ABORTED';

export interface Notification {
  readonly id: number;
  readonly userId: number;
  readonly projectId: number | null;
  readonly channel: NotificationChannel;
  readonly destination: string;
  readonly scope: NotificationScope;
  readonly createTime: number;
}

export interface NotificationDraft {
  readonly projectId: number | null;
  readonly channel: NotificationChannel;
  readonly destination: string;
  readonly scope: NotificationScope;
}

/** The result of a finished run from the states of its current device runs: the worst one wins. */
export function runResultOf(states: ReadonlySet<string>): RunResult {
  if (states.has('FAILED')) return 'FAILED';
  if (states.has('WARNING') || states.has('TIMEOUT')) return 'WARNING';
  if (states.has('ABORTED')) return 'ABORTED';
  return 'SUCCEEDED';
}

/** The scopes a finished run with this result notifies. */
export function scopesNotifiedBy(result: RunResult): NotificationScope[] {
  const scopes: NotificationScope[] = ['ALL', 'TEST_RUN'];
  if (result === 'FAILED') scopes.push('TEST_RUN_FAILURE');
  if (result === 'SUCCEEDED') scopes.push('TEST_RUN_SUCCEEDED');
  return scopes;
}

export function parseChannel(raw: unknown): NotificationChannel {
  const value = typeof raw === 'string' ? raw.trim().toUpperCase() : '';
  if (!(NOTIFICATION_CHANNELS as readonly string[]).includes(value)) {
    throw new InvalidParameterError(
      'channel',
      `Parameter 'channel' must be one of ${NOTIFICATION_CHANNELS.join(', ')}${raw === undefined || raw === '' ? '' : ` (not '${String(raw).slice(0, 40)}')`}`,
    );
  }
  return value as NotificationChannel;
}

export function parseScope(raw: unknown): NotificationScope {
  const value = typeof raw === 'string' ? raw.trim().toUpperCase() : '';
  if (!(NOTIFICATION_SCOPES as readonly string[]).includes(value)) {
    throw new InvalidParameterError(
      'scope',
      `Parameter 'scope' must be one of ${NOTIFICATION_SCOPES.join(', ')}${raw === undefined || raw === '' ? '' : ` (not '${String(raw).slice(0, 40)}')`}`,
    );
  }
  return value as NotificationScope;
}

// One address, no display name, nothing that could end a header line or start another.
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/**
 * Checks a destination for its channel: an e-mail address, or an http(s) URL whose host is not a
 * refused address (the rules of run-finished hooks; names are checked again when sending).
 */
export function checkDestination(channel: NotificationChannel, raw: unknown, rules: HookDestinationRules): string {
  const destination = typeof raw === 'string' ? raw.trim() : '';
  if (destination === '') throw new InvalidParameterError('destination', `Parameter 'destination' is required`);
  if (destination.length > 2000)
    throw new InvalidParameterError('destination', `Parameter 'destination' must be at most 2000 characters`);
  if (channel === 'EMAIL') {
    if (destination.length > 254 || !EMAIL.test(destination))
      throw new InvalidParameterError(
        'destination',
        `Parameter 'destination' must be an e-mail address such as ci@example.com for channel EMAIL`,
      );
    return destination;
  }
  let url: URL;
  try {
    url = new URL(destination);
  } catch {
    throw new InvalidParameterError(
      'destination',
      `Parameter 'destination' must be an http:// or https:// URL for channel ${channel}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidParameterError(
      'destination',
      `Parameter 'destination' must be an http:// or https:// URL for channel ${channel}`,
    );
  const refusal = hostRefusal(url.hostname, rules);
  if (refusal !== null)
    throw new InvalidParameterError(
      'destination',
      `Parameter 'destination' points at ${url.hostname}, ${refusal}; notifications may only go to addresses outside the server's network (an operator can allow networks with --hook-allow-networks)`,
    );
  return destination;
}

/** The words a notification says about a finished run, the same by every channel. */
export function runMessage(run: {
  readonly id: number;
  readonly projectId: number;
  readonly name: string | null;
  readonly result: RunResult;
}): { subject: string; text: string } {
  const name = run.name === null || run.name === '' ? `Test run ${run.id}` : `Test run ${run.id} (${run.name})`;
  const subject = `${name} finished: ${run.result}`;
  return { subject, text: `${subject}\nProject ${run.projectId}, test run ${run.id}.\n` };
}

/** The list grammar's fields of `/me/notifications` (docs/api.md#lists). */
export const NOTIFICATION_LIST: ListSpec<
  'id' | 'channel' | 'destination' | 'scope' | 'projectId' | 'createTime' | 'projectName' | 'userId' | 'userEmail'
> = {
  entity: 'notifications',
  fields: {
    id: { type: 'number' },
    channel: { type: 'enum', values: NOTIFICATION_CHANNELS },
    destination: { type: 'string' },
    scope: { type: 'enum', values: NOTIFICATION_SCOPES },
    projectId: { type: 'number' },
    createTime: { type: 'date' },
    projectName: { type: 'string' },
    userId: { type: 'number' },
    userEmail: { type: 'string' },
  },
  defaultSort: [{ field: 'id', direction: 'asc' }],
};
