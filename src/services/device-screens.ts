/**
 * The devices page's live thumbnails (docs/api.md#device-screens): which busy devices run a
 * session the user may see, and the newest picture of each. What the user may not see (another
 * tenant's session, another user's interactive session) is not listed: its device shows busy in
 * the anonymous device list, with no picture.
 */
import { NotFoundError } from '../domain/errors.ts';
import type { User } from '../domain/users.ts';
import type { DeviceScreen } from '../domain/interactive.ts';
import type { LiveFrame } from '../store/live-frames.ts';
import type { Context } from './context.ts';
import { requireSession } from './interactive.ts';

export function listDeviceScreens(ctx: Context, user: User): Promise<DeviceScreen[]> {
  return ctx.store.liveFrames.screensFor(user.id);
}

/** The newest frame of a session the user may watch (the holder's interactive one, or a readable run's). */
export async function newestFrame(ctx: Context, user: User, id: number): Promise<LiveFrame> {
  const deviceRun = await requireSession(ctx, user, id, { automatic: 'allow' });
  const frame = await ctx.store.liveFrames.newest(deviceRun.id);
  // The session is there (its holder or reader knows it): what is missing is a frame.
  if (frame === undefined) throw new NotFoundError(`Frame of device session ${id}`);
  return frame;
}
