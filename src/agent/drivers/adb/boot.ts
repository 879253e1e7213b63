/** Rebooting a phone and knowing when it is back: a new boot id (so the old boot cannot be mistaken for it) and boot completed. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeviceIo } from './device-io.ts';
import type { DeviceTracker } from './tracker.ts';

const BOOT_ID = '/proc/sys/kernel/random/boot_id';

export async function bootState(io: DeviceIo, signal?: AbortSignal): Promise<{ bootId: string; completed: boolean }> {
  const [bootId = '', completed = ''] = (
    await io.shell(`cat ${BOOT_ID}; getprop sys.boot_completed`, { signal, timeoutMs: 10_000 })
  )
    .trim()
    .split('\n');
  return { bootId: bootId.trim(), completed: completed.trim() === '1' };
}

export async function rebootAndWait(
  io: DeviceIo,
  tracker: DeviceTracker,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const before = (await bootState(io, signal)).bootId;
  await io.reboot();
  await waitForBoot(io, tracker, timeoutMs, before, signal);
}

/** Until the phone is back on adb, booted, and (given `previousBootId`) in a new boot. */
export async function waitForBoot(
  io: DeviceIo,
  tracker: DeviceTracker,
  timeoutMs: number,
  previousBootId: string | null,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'it did not come back on adb';
  while (Date.now() < deadline) {
    signal?.throwIfAborted();
    if (tracker.state(io.serial) === 'device') {
      try {
        const state = await bootState(io, signal);
        if (state.bootId !== previousBootId && state.completed) return;
        last = state.bootId === previousBootId ? 'it did not restart' : 'sys.boot_completed never became 1';
      } catch (error) {
        if (signal?.aborted) throw error;
        last = (error as Error).message;
      }
    }
    await sleep(500, undefined, { signal });
  }
  throw new Error(`the phone did not finish booting within ${Math.round(timeoutMs / 1000)} s (${last})`);
}
