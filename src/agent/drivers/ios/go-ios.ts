/**
 * The `ios` executable of go-ios (github.com/danielpaulus/go-ios), the driver's only way to the
 * devices: one process a command, JSON out (go-ios-output.ts reads it). Short commands run to the
 * end under a time limit; streams (syslog, sysmontap, runtest, runwda, forward) are started and
 * stopped. The agent's own environment is passed on without its DEVICECLOUD_* settings (the agent
 * token among them); go-ios reads USBMUXD_SOCKET_ADDRESS, GO_IOS_* and HOME from it.
 */
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import type { Readable } from 'node:stream';
import {
  type InstalledApp,
  type Language,
  type ListedDevice,
  type LogLine,
  errorOf,
  parseApps,
  parseCrashList,
  parseDeviceInfo,
  parseDeviceList,
  parseLanguage,
  parseLogLine,
} from './go-ios-output.ts';

const KILL_GRACE_MS = 2000;
const OUTPUT_LIMIT = 16 * 1024 * 1024;

export class GoIosError extends Error {
  constructor(
    readonly args: readonly string[],
    message: string,
  ) {
    super(message);
    this.name = 'GoIosError';
  }
}

export interface Finished {
  readonly stdout: string;
  readonly lines: LogLine[];
}

export interface RunOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Added to the environment of this command (e.g. TMPDIR for runtest's attachments). */
  readonly env?: Readonly<Record<string, string>>;
}

export interface StartOptions extends RunOptions {
  readonly onStdoutLine?: (line: string) => void;
  readonly onLogLine?: (line: LogLine) => void;
}

export interface Started {
  /** Resolves when the process has exited, with its exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  /** Ends the process (TERM, then KILL) and resolves when it has gone. */
  stop(): Promise<void>;
}

export class GoIos {
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    readonly binary: string,
    env: Readonly<Record<string, string>> = {},
  ) {
    this.env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('DEVICECLOUD_'))),
      ...env,
    };
  }

  /** Runs a command to its end; a non-zero exit or a logged error is a GoIosError naming go-ios' reason. */
  run(args: readonly string[], options: RunOptions = {}): Promise<Finished> {
    const { timeoutMs = 60_000, signal } = options;
    // Error messages become run fail reasons, which users see: no identity password in them.
    const command = `ios ${args.map((arg) => arg.replace(/^(--p12password=).*$/, '$1…')).join(' ')}`;
    if (signal?.aborted) return Promise.reject(new GoIosError(args, `${command}: stopped`));
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, args, {
        env: { ...this.env, ...options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const stdout = capped();
      const stderr = capped();
      child.stdout.on('data', stdout.add);
      child.stderr.on('data', stderr.add);
      let ended: string | null = null;
      const end = (why: string) => {
        ended ??= why;
        terminate(child);
      };
      const timer = setTimeout(() => end(`did not finish within ${Math.round(timeoutMs / 1000)} s`), timeoutMs);
      const onAbort = () => end('stopped');
      signal?.addEventListener('abort', onAbort, { once: true });
      child.on('error', (error) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(new GoIosError(args, `${command}: go-ios could not be started (${error.message})`));
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const lines = stderr
          .text()
          .split('\n')
          .map(parseLogLine)
          .filter((line): line is LogLine => line !== null);
        const out = stdout.text();
        const error = errorOf(lines);
        if (ended !== null) reject(new GoIosError(args, `${command}: ${ended}`));
        else if (code !== 0 || error !== null)
          reject(new GoIosError(args, `${command} failed: ${error ?? lastWords(lines, out) ?? `exit code ${code}`}`));
        else resolve({ stdout: out, lines });
      });
    });
  }

  /** Starts a long-running command (a stream, a test run, a server); `signal` stops it too. */
  start(args: readonly string[], options: StartOptions = {}): Started {
    const child = spawn(this.binary, args, { env: { ...this.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => {
      child.on('error', () => resolve(null));
      child.on('close', (code) => resolve(code));
    });
    eachLine(child.stdout, (line) => options.onStdoutLine?.(line));
    eachLine(child.stderr, (text) => {
      const line = parseLogLine(text);
      if (line !== null) options.onLogLine?.(line);
    });
    const stop = async () => {
      terminate(child);
      await exited;
    };
    if (options.signal?.aborted) void stop();
    options.signal?.addEventListener('abort', () => void stop(), { once: true });
    return { exited, stop };
  }

  async list(): Promise<ListedDevice[]> {
    return parseDeviceList((await this.run(['list', '--details'])).stdout);
  }

  /** The UDIDs usbmuxd knows, without asking the devices anything. */
  async udids(): Promise<string[]> {
    return parseDeviceList((await this.run(['list'])).stdout).map((device) => device.udid);
  }

  async info(udid: string): Promise<ListedDevice> {
    return parseDeviceInfo(udid, (await this.run(['info', udidArg(udid)])).stdout);
  }

  async apps(udid: string): Promise<InstalledApp[]> {
    return parseApps((await this.run(['apps', udidArg(udid)])).stdout);
  }

  async install(udid: string, appPath: string, signal?: AbortSignal): Promise<void> {
    await this.run(['install', `--path=${appPath}`, udidArg(udid)], { timeoutMs: 10 * 60_000, signal });
  }

  async uninstall(udid: string, bundleId: string): Promise<void> {
    await this.run(['uninstall', bundleId, udidArg(udid)], { timeoutMs: 5 * 60_000 });
  }

  async reboot(udid: string): Promise<void> {
    await this.run(['reboot', udidArg(udid)]);
  }

  /** Reads the device's language and region, setting them first when `set` is given. */
  async language(udid: string, set?: Language): Promise<Language> {
    const args = [
      'lang',
      ...(set === undefined ? [] : [`--setlocale=${set.locale}`, `--setlang=${set.language}`]),
      udidArg(udid),
    ];
    // Changing the language restarts SpringBoard, which go-ios waits for.
    return parseLanguage((await this.run(args, { timeoutMs: 3 * 60_000 })).stdout);
  }

  /** Mounts the developer disk image (personalized on iOS 17+) that instruments and XCTest need; a reboot unmounts it. */
  async mountDeveloperImage(udid: string, imageDir: string): Promise<void> {
    await this.run(['image', 'auto', `--basedir=${imageDir}`, udidArg(udid)], { timeoutMs: 10 * 60_000 });
  }

  async crashReports(udid: string, pattern: string): Promise<string[]> {
    return parseCrashList((await this.run(['crash', 'ls', pattern, udidArg(udid)])).stdout);
  }

  async copyCrashReports(udid: string, pattern: string, targetDir: string): Promise<void> {
    await this.run(['crash', 'cp', pattern, targetDir, udidArg(udid)], { timeoutMs: 5 * 60_000 });
  }

  async screenshot(udid: string, file: string, signal?: AbortSignal): Promise<void> {
    await this.run(['screenshot', `--output=${file}`, udidArg(udid)], { signal });
  }

  async kill(udid: string, bundleId: string): Promise<void> {
    await this.run(['kill', bundleId, udidArg(udid)], { timeoutMs: 15_000 });
  }
}

export function udidArg(udid: string): string {
  return `--udid=${udid}`;
}

/** Output kept up to a limit; a command that floods is cut, not the agent's memory. */
function capped(): { add(chunk: Buffer): void; text(): string } {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    add: (chunk) => {
      if (size >= OUTPUT_LIMIT) return;
      chunks.push(chunk);
      size += chunk.length;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}

function terminate(child: ReturnType<typeof spawn>): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
  child.once('close', () => clearTimeout(timer));
}

function eachLine(stream: Readable, onLine: (line: string) => void): void {
  readline.createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', onLine);
}

/** What a failed command said when it logged no error: a Go panic, else its last line of either kind. */
function lastWords(lines: readonly LogLine[], stdout: string): string | null {
  const panic = lines.find((line) => line.level === 'TEXT' && line.msg.startsWith('panic: '));
  if (panic !== undefined) return `go-ios crashed: ${panic.msg}`;
  const last = lines.findLast((line) => line.level !== 'WARN' && line.level !== 'DEBUG');
  if (last !== undefined) return last.msg;
  return stdout.trim().split('\n').pop() || null;
}
