/**
 * An interactive session on an Android phone over adb (docs/api.md#interactive-sessions): each
 * input becomes the `input` (or `am`, `settings`, `pm`) shell command a person's finger would
 * cause, points are checked against the screen's size (`wm size`), frames are `screencap -p`, and
 * the log pane is `logcat -v time`.
 * The rotation the user chose is put back when the session ends; cleaning removes the apps.
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { Key } from '../../../domain/interactive.ts';
import {
  type DeviceInput,
  type ExecutionContext,
  type ExecutionResult,
  InputRefused,
  type InteractiveDevice,
  type Job,
} from '../../driver.ts';
import { interactiveResult } from '../../interactive-relay.ts';
import { type DeviceIo, InstallRefused } from './device-io.ts';
import type { AdbDevice } from './session.ts';
import { inputTextArgument } from './ui-automator.ts';

/** `screencap` over USB takes a few hundred milliseconds: looking more often only queues them. */
const FRAME_INTERVAL_MS = 500;
const INPUT_TIMEOUT_MS = 30_000;
/** How much of the log before the session the pane starts with. */
const LOG_HISTORY_LINES = 200;

export const KEY_CODES: Readonly<Record<Key, string>> = {
  home: 'KEYCODE_HOME',
  back: 'KEYCODE_BACK',
  power: 'KEYCODE_POWER',
  volumeUp: 'KEYCODE_VOLUME_UP',
  volumeDown: 'KEYCODE_VOLUME_DOWN',
  enter: 'KEYCODE_ENTER',
  menu: 'KEYCODE_MENU',
};

export async function serveInteractiveAdb(
  job: Job,
  context: ExecutionContext,
  device: AdbDevice,
): Promise<ExecutionResult> {
  if (context.interactive === undefined) throw new Error('an interactive session without its channel');
  const size = await screenSize(device.io, context.signal);
  context.step('RUNNING');
  try {
    const end = await context.interactive.serve(
      adbInteractiveDevice(device, size, path.join(job.workDir, 'frames'), context.signal),
    );
    return interactiveResult(end, `session on ${device.description.displayName}`);
  } finally {
    await device.io
      .shell('settings put system user_rotation 0; settings put system accelerometer_rotation 1', {
        timeoutMs: INPUT_TIMEOUT_MS,
      })
      .catch(() => undefined);
  }
}

/** The size `input` coordinates are in: the override (`wm size 720x1280`) when there is one. */
export async function screenSize(
  io: DeviceIo,
  signal?: AbortSignal,
): Promise<{ width: number; height: number } | null> {
  try {
    const output = await io.shell(['wm', 'size'], { signal, timeoutMs: INPUT_TIMEOUT_MS });
    const found =
      /Override size:\s*(\d+)x(\d+)/.exec(output) ?? /Physical size:\s*(\d+)x(\d+)/.exec(output) ?? undefined;
    return found === undefined ? null : { width: Number(found[1]), height: Number(found[2]) };
  } catch {
    // A phone whose `wm` cannot tell: the phone itself ignores points off its screen.
    return null;
  }
}

export function adbInteractiveDevice(
  device: AdbDevice,
  size: { width: number; height: number } | null,
  dir: string,
  signal: AbortSignal,
): InteractiveDevice {
  const { io } = device;
  fs.mkdirSync(dir, { recursive: true });
  let shots = 0;
  const shell = async (args: readonly string[], describeAs?: string) => {
    const output = (await io.shell(args, { signal, timeoutMs: INPUT_TIMEOUT_MS, describeAs })).trim();
    const complaint = /^(Error|Exception|java\.\w|usage:).*$/im.exec(output)?.[0];
    if (complaint !== undefined)
      throw new Error(`${describeAs ?? args.slice(0, 2).join(' ')} failed: ${complaint.slice(0, 160)}`);
    return output;
  };
  const inside = (x: number, y: number) => {
    if (size !== null && (x >= size.width || y >= size.height))
      throw new InputRefused(
        `The point (${x}, ${y}) is off the ${size.width}x${size.height} screen of ${device.description.displayName}`,
      );
  };
  const screenshot = async () => {
    shots += 1;
    const file = path.join(dir, `${shots % 4}.png`);
    await io.screencap(file, signal);
    return fs.promises.readFile(file);
  };

  return {
    frameIntervalMs: FRAME_INTERVAL_MS,
    frame: screenshot,
    // The last lines before the session, then each as the phone logs it.
    async *log(stop: AbortSignal) {
      const stream = await io.stream(['logcat', '-v', 'time', '-T', String(LOG_HISTORY_LINES)], stop);
      stop.addEventListener('abort', () => stream.destroy(), { once: true });
      try {
        for await (const line of readline.createInterface({ input: stream, crlfDelay: Infinity })) yield line;
      } catch (error) {
        if (!stop.aborted) throw error;
      } finally {
        stream.destroy();
      }
    },
    async input(input: DeviceInput) {
      switch (input.action) {
        case 'tap':
          inside(input.x, input.y);
          await shell(['input', 'tap', String(input.x), String(input.y)]);
          return null;
        case 'longPress':
          inside(input.x, input.y);
          // A swipe that stays where it started is a long press, on every Android version.
          await shell(['input', 'swipe', ...[input.x, input.y, input.x, input.y, input.durationMs].map(String)]);
          return null;
        case 'swipe':
          inside(input.x, input.y);
          inside(input.toX, input.toY);
          await shell(['input', 'swipe', ...[input.x, input.y, input.toX, input.toY, input.durationMs].map(String)]);
          return null;
        case 'text': {
          const argument = inputTextArgument(input.text);
          if (argument === null)
            throw new InputRefused(
              'Android phones type printable ASCII only through adb (no "%s", no accents or emoji); send it in parts',
            );
          await shell(['input', 'text', argument], 'input text');
          return null;
        }
        case 'key':
          await shell(['input', 'keyevent', KEY_CODES[input.key]]);
          return null;
        case 'rotate':
          await shell(['settings', 'put', 'system', 'accelerometer_rotation', '0']);
          await shell(['settings', 'put', 'system', 'user_rotation', input.orientation === 'landscape' ? '1' : '0']);
          return null;
        case 'install':
          try {
            await io.install(input.app.path, device.description.apiLevel, signal);
          } catch (error) {
            if (error instanceof InstallRefused) throw new InputRefused(`The phone refused the app: ${error.message}`);
            throw error;
          }
          return { appId: input.app.properties.package_name ?? null };
        case 'openUrl':
          await shell(['am', 'start', '-a', 'android.intent.action.VIEW', '-d', input.url]);
          return null;
        case 'screenshot':
          return (await screenshot()).toString('base64');
      }
    },
  };
}
