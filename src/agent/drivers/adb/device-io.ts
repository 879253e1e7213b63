/**
 * One phone, through the ADB server (adbkit): shell commands that can be stopped, streams,
 * pushes, installs and screenshots. Everything here has a deadline or obeys a signal, because a
 * phone that is unplugged mid-command otherwise leaves a promise that never settles.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AdbClient as Client } from './adbkit.ts';

type DeviceClient = ReturnType<Client['getDevice']>;

/** Short commands (getprop, pm list, dumpsys) answer within seconds on a healthy phone. */
const SHELL_TIMEOUT_MS = 60_000;
/** Pushing and installing a large APK over USB 2 can take minutes. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;

export class CommandError extends Error {}

/** `pm install` refused the APK: a problem of the app or the device's Android version, not of the infrastructure. */
export class InstallRefused extends Error {}

export interface ShellOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  /** How errors name the command when its words must not be shown (`input text` of a password). */
  readonly describeAs?: string;
}

export class DeviceIo {
  private readonly device: DeviceClient;

  constructor(
    client: Client,
    readonly serial: string,
  ) {
    this.device = client.getDevice(serial);
  }

  /**
   * Runs a command and answers its output. An array is quoted word by word (adbkit's quoting),
   * which is how anything that came from a user reaches the shell.
   */
  async shell(command: string | readonly string[], options: ShellOptions = {}): Promise<string> {
    const what = options.describeAs ?? describe(command);
    const stream = await this.stream(command, options.signal, what);
    return (await readAll(stream, options.signal, options.timeoutMs ?? SHELL_TIMEOUT_MS, what)).toString('utf8');
  }

  /** A command whose output is read as it comes (logcat, am instrument, monkey); destroying the stream hangs up. */
  async stream(command: string | readonly string[], signal?: AbortSignal, what = describe(command)): Promise<Readable> {
    signal?.throwIfAborted();
    const pending = Promise.resolve(
      this.device.shell(Array.isArray(command) ? [...command] : (command as string)),
    ) as Promise<Readable>;
    // A stream that arrives after we gave up would otherwise stay open on the phone.
    pending.then(
      (late) => signal?.aborted && late.destroy(),
      () => undefined,
    );
    const stream = await within(pending, SHELL_TIMEOUT_MS, signal, `adb shell ${what}`);
    if (signal?.aborted) {
      stream.destroy();
      signal.throwIfAborted();
    }
    return stream;
  }

  async getprop(name: string, options: ShellOptions = {}): Promise<string> {
    return (await this.shell(['getprop', name], options)).trim();
  }

  async properties(): Promise<Record<string, string>> {
    return within(Promise.resolve(this.device.getProperties()), SHELL_TIMEOUT_MS, undefined, 'adb shell getprop');
  }

  async push(localPath: string, remotePath: string, signal?: AbortSignal): Promise<void> {
    const transfer = await within(
      Promise.resolve(this.device.push(localPath, remotePath)),
      SHELL_TIMEOUT_MS,
      signal,
      `adb push ${path.basename(localPath)}`,
    );
    await within(
      new Promise<void>((resolve, reject) => {
        transfer.on('end', resolve);
        transfer.on('error', reject);
      }),
      INSTALL_TIMEOUT_MS,
      signal,
      `adb push ${path.basename(localPath)}`,
      () => transfer.cancel(),
    );
  }

  /** `adb pull`: a file of the phone to a local file. */
  async pull(remotePath: string, localPath: string, signal?: AbortSignal): Promise<void> {
    const what = `adb pull ${remotePath}`;
    const transfer = (await within(
      Promise.resolve(this.device.pull(remotePath)),
      SHELL_TIMEOUT_MS,
      signal,
      what,
    )) as unknown as Readable;
    await within(pipeline(transfer, fs.createWriteStream(localPath)), INSTALL_TIMEOUT_MS, signal, what, () =>
      transfer.destroy(),
    );
  }

  /**
   * `adb install -r -t [-g]`: replace what is there, allow test-only APKs, and (Android 6+) grant
   * the runtime permissions the APK asks for, so that a permission dialog does not stop the tests.
   */
  async install(localPath: string, apiLevel: number | null, signal?: AbortSignal): Promise<void> {
    const remote = `/data/local/tmp/devicecloud-${process.pid}-${path.basename(localPath).replace(/[^A-Za-z0-9._-]/g, '_')}`;
    await this.push(localPath, remote, signal);
    try {
      const flags = ['-r', '-t', ...(apiLevel !== null && apiLevel >= 23 ? ['-g'] : [])];
      const output = await this.shell(['pm', 'install', ...flags, remote], { signal, timeoutMs: INSTALL_TIMEOUT_MS });
      if (!/^Success/m.test(output))
        throw new InstallRefused(
          /^Failure.*$|^Error.*$|^Exception.*$/m.exec(output)?.[0] ?? (output.trim() || 'pm install said nothing'),
        );
    } finally {
      await this.shell(['rm', '-f', remote]).catch(() => undefined);
    }
  }

  async screencap(file: string, signal?: AbortSignal): Promise<void> {
    const stream = (await within(
      Promise.resolve(this.device.screencap()),
      SHELL_TIMEOUT_MS,
      signal,
      'adb shell screencap -p',
    )) as Readable;
    await within(pipeline(stream, fs.createWriteStream(file)), SHELL_TIMEOUT_MS, signal, 'adb shell screencap -p', () =>
      stream.destroy(),
    );
  }

  async reboot(): Promise<void> {
    await within(Promise.resolve(this.device.reboot()), SHELL_TIMEOUT_MS, undefined, 'adb reboot');
  }
}

function describe(command: string | readonly string[]): string {
  const text = Array.isArray(command) ? command.join(' ') : (command as string);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** All of a stream, unless the signal fires or the deadline passes first (then the stream is destroyed). */
export function readAll(
  stream: Readable,
  signal: AbortSignal | undefined,
  timeoutMs: number,
  what: string,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return within(
    new Promise<Buffer>((resolve, reject) => {
      stream.on('end', () => resolve(Buffer.concat(chunks)));
      stream.on('close', () => resolve(Buffer.concat(chunks)));
      stream.on('error', reject);
    }),
    timeoutMs,
    signal,
    `adb shell ${what}`,
    () => stream.destroy(),
  );
}

/** Settles with the promise, or rejects when the signal fires or the deadline passes (after `onGiveUp`). */
export function within<T>(
  promise: Promise<T>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  what: string,
  onGiveUp?: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const settle = (action: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      action();
    };
    const abort = () =>
      settle(() => {
        onGiveUp?.();
        reject(signal!.reason instanceof Error ? signal!.reason : new CommandError(`${what}: stopped`));
      });
    const timer = setTimeout(
      () =>
        settle(() => {
          onGiveUp?.();
          reject(new CommandError(`${what}: no answer within ${Math.round(timeoutMs / 1000)} s`));
        }),
      timeoutMs,
    );
    if (signal?.aborted) return abort();
    signal?.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error instanceof Error ? error : new CommandError(String(error)))),
    );
  });
}
