/**
 * The account pages (docs/api.md#account-pages): notification subscriptions and their test,
 * preferences, statistics and device usage. Everything is the caller's own: another user's
 * subscription or project is a 404 like a missing one.
 */
import {
  type DeviceUsage,
  type DEVICE_USAGE_LIST,
  type Period,
  type UserStatistics,
} from '../domain/account-figures.ts';
import type { Device } from '../domain/devices.ts';
import { InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import { hookDestinationRules } from '../domain/hook-destinations.ts';
import type { ListQuery } from '../domain/list-query.ts';
import {
  type NOTIFICATION_LIST,
  type NotificationDraft,
  checkDestination,
  parseChannel,
  parseScope,
} from '../domain/notifications.ts';
import { type Preferences, checkPreferenceChanges, preferencesOf } from '../domain/preferences.ts';
import type { Project } from '../domain/projects.ts';
import { PLAN_MAX_TIMEOUT_SECONDS, type User } from '../domain/users.ts';
import type { NotificationRecord } from '../store/notifications.ts';

export type { NotificationRecord };
import type { Context } from './context.ts';
import { requireProject } from './projects.ts';
import type { Page } from './views.ts';

type NotificationField = keyof (typeof NOTIFICATION_LIST)['fields'];
type UsageField = keyof (typeof DEVICE_USAGE_LIST)['fields'];

export interface NotificationInput {
  readonly channel?: unknown;
  readonly destination?: unknown;
  readonly scope?: unknown;
  readonly projectId?: unknown;
}

export function listNotifications(
  ctx: Context,
  user: User,
  query: ListQuery<NotificationField>,
): Promise<Page<NotificationRecord>> {
  return ctx.store.notifications.list(user.id, query);
}

export async function getNotification(ctx: Context, user: User, id: number): Promise<NotificationRecord> {
  const found = await ctx.store.notifications.find(user.id, id);
  if (found === undefined) throw new NotFoundError('Notification', id);
  return found;
}

/** `projectId` absent, empty or 0: every project; else one of the caller's own (404 otherwise). */
async function projectOf(ctx: Context, user: User, raw: unknown): Promise<Project | null> {
  if (raw === undefined || raw === null || raw === '' || raw === 0 || raw === '0') return null;
  const id = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (!Number.isSafeInteger(id) || id < 1)
    throw new InvalidParameterError('projectId', `Parameter 'projectId' must be a project id (or 0 for every project)`);
  return requireProject(ctx, user, id);
}

async function draftOf(
  ctx: Context,
  user: User,
  input: NotificationInput,
  current?: NotificationRecord,
): Promise<NotificationDraft> {
  const channel = input.channel === undefined && current ? current.channel : parseChannel(input.channel);
  const scope = input.scope === undefined && current ? current.scope : parseScope(input.scope);
  const rules = hookDestinationRules(ctx.limits.hookAllowNetworks);
  const destination = checkDestination(
    channel,
    input.destination === undefined && current ? current.destination : input.destination,
    rules,
  );
  const projectId =
    input.projectId === undefined && current
      ? current.projectId
      : ((await projectOf(ctx, user, input.projectId))?.id ?? null);
  return { channel, scope, destination, projectId };
}

export async function createNotification(
  ctx: Context,
  user: User,
  input: NotificationInput,
): Promise<NotificationRecord> {
  const draft = await draftOf(ctx, user, input);
  const id = await ctx.store.notifications.insert(user.id, draft, ctx.clock());
  return getNotification(ctx, user, id);
}

export async function updateNotification(
  ctx: Context,
  user: User,
  id: number,
  input: NotificationInput,
): Promise<NotificationRecord> {
  const current = await getNotification(ctx, user, id);
  await ctx.store.notifications.update(user.id, id, await draftOf(ctx, user, input, current));
  return getNotification(ctx, user, id);
}

export async function deleteNotification(ctx: Context, user: User, id: number): Promise<void> {
  if (!(await ctx.store.notifications.delete(user.id, id))) throw new NotFoundError('Notification', id);
}

/**
 * Sends a test message to the subscription's destination now, through the same senders as real
 * notifications; answers once it was taken (an SMTP server accepted it, or the endpoint answered
 * 2xx). A destination that cannot take it, or no SMTP server for e-mail, is a 400 saying why.
 */
export async function testNotification(ctx: Context, user: User, id: number): Promise<NotificationRecord> {
  const notification = await getNotification(ctx, user, id);
  const subject = `devicecloud test notification (${notification.scope})`;
  const text = `This is a test of a notification subscription of ${user.email}: it would tell about ${notification.scope} events${notification.projectName === null ? '' : ` of project ${notification.projectName}`}.\n`;
  const senders = ctx.senders;
  if (notification.channel === 'EMAIL') {
    if (senders?.mail === null || senders?.mail === undefined)
      throw new InvalidParameterError(
        'channel',
        'No SMTP server is configured on this server (an operator sets --smtp-url), so e-mail notifications cannot be sent',
      );
    try {
      await senders.mail({ to: notification.destination, subject, text });
    } catch (error) {
      throw new InvalidParameterError('destination', `The test e-mail was not sent: ${(error as Error).message}`);
    }
    return notification;
  }
  if (senders === undefined)
    throw new InvalidParameterError('channel', 'This server sends no notifications (it has no senders configured)');
  const [body, contentType] =
    notification.channel === 'SLACK'
      ? [JSON.stringify({ text: subject }), 'application/json']
      : [
          new URLSearchParams({ test: 'true', notificationId: String(notification.id) }).toString(),
          'application/x-www-form-urlencoded;charset=UTF-8',
        ];
  let status: number;
  try {
    status = await senders.post(notification.destination, body, contentType);
  } catch (error) {
    throw new InvalidParameterError('destination', `The test notification was not sent: ${(error as Error).message}`);
  }
  if (status < 200 || status >= 300)
    throw new InvalidParameterError(
      'destination',
      `The test notification was not taken: the destination answered ${status}`,
    );
  return notification;
}

export async function getPreferences(ctx: Context, user: User): Promise<Preferences> {
  return preferencesOf(await ctx.store.preferences.testTimeoutOf(user.id), Math.floor(ctx.limits.sessionTtlMs / 1000));
}

export async function updatePreferences(
  ctx: Context,
  user: User,
  input: { testTimeout?: unknown; httpSessionMaxInactiveInterval?: unknown },
): Promise<Preferences> {
  const current = await getPreferences(ctx, user);
  const timeout = checkPreferenceChanges(input, current, PLAN_MAX_TIMEOUT_SECONDS[user.plan]);
  if (timeout !== undefined) await ctx.store.preferences.setTestTimeout(user.id, timeout);
  return getPreferences(ctx, user);
}

export function getStatistics(ctx: Context, user: User, period: Period): Promise<UserStatistics> {
  return ctx.store.accountFigures.statistics(user.id, period, ctx.clock());
}

export async function listDeviceUsage(
  ctx: Context,
  user: User,
  period: Period,
  query: ListQuery<UsageField>,
): Promise<Page<{ usage: DeviceUsage; device: Device }>> {
  const page = await ctx.store.accountFigures.deviceUsage(user.id, period, query, ctx.clock());
  const devices = await ctx.store.devices.byIds(page.items.map((usage) => usage.deviceId));
  return {
    total: page.total,
    items: page.items.flatMap((usage) => {
      const device = devices.get(usage.deviceId);
      return device === undefined ? [] : [{ usage, device }];
    }),
  };
}
