/**
 * Runs a server-side test package for real: `run-tests.sh` from the uploaded zip, with bash, in a
 * fresh sandbox, in a session of its own (so an abort or timeout kills everything it started), with a small documented environment (not the agent's: it may hold secrets). Output
 * goes to a capped log that never blocks the child; results are collected from $OUTPUT_DIR.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ENV_NAME } from '../../../domain/values.ts';
import type { Artifact, ExecutionContext, ExecutionResult, Job } from '../../driver.ts';
import type { DeviceState, VirtualSettings } from './device-state.ts';
import type { VirtualDeviceSpec } from './devices.ts';
import { sampleGroup, signalSession } from './process-tree.ts';

export const LOG_LIMIT_BYTES = 10 * 1024 * 1024;
const KILL_GRACE_MS = 2000;

/** Variables the agent sets; run parameters may not replace them. */
const RESERVED = new Set([
  'PATH', 'HOME', 'LANG', 'TMPDIR', 'DEVICE_NAME', 'DEVICE_SERIAL', 'DEVICE_OS', 'DEVICE_OS_VERSION', 'DEVICE_API_LEVEL',
  'DEVICE_RUN_ID', 'APP_PATH', 'APP_PACKAGE', 'OUTPUT_DIR', 'SCREENSHOT_DIR', 'DEVICE_STORAGE', 'LOCALE', 'TIMEOUT_SECONDS',
  'DEVICE_LOCALE', 'DEVICE_WIFI', 'DEVICE_GOOGLE_ACCOUNT',
]);

export async function runServerSide(job: Job, context: ExecutionContext, device: VirtualDeviceSpec, state: DeviceState): Promise<ExecutionResult> {
  const infra = (failReason: string): ExecutionResult => ({ outcome: 'INFRA_ERROR', failReason, testCases: null, exitCode: null, artifacts: [] });
  if (job.tests === null) return infra('no test package (a zip with run-tests.sh) was given');
  context.step('INSTALL');
  const appPath = job.app === null ? '' : state.install(job.app.path, job.app.properties.package_name ?? job.app.properties.bundle_identifier ?? path.basename(job.app.path));
  const sandbox = path.join(job.workDir, 'tests');
  const outputDir = path.join(job.workDir, 'output');
  const screenshotDir = path.join(outputDir, 'screenshots');
  const logFile = path.join(job.workDir, 'logs', 'test.log');
  for (const dir of [sandbox, screenshotDir, path.dirname(logFile), path.join(job.workDir, 'tmp')]) fs.mkdirSync(dir, { recursive: true });
  try {
    await context.unzip(job.tests.path, sandbox);
  } catch (error) {
    return infra(`the test package could not be unpacked: ${(error as Error).message}`);
  }
  const script = ['run-tests.sh', ...fs.readdirSync(sandbox).map((top) => path.join(top, 'run-tests.sh'))].find((candidate) => fs.existsSync(path.join(sandbox, candidate)));
  if (script === undefined) return infra('the test package has no run-tests.sh');
  const cwd = path.join(sandbox, path.dirname(script));

  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: cwd,
    LANG: 'C.UTF-8',
    TMPDIR: path.join(job.workDir, 'tmp'),
    DEVICE_NAME: device.displayName,
    DEVICE_SERIAL: device.serial,
    DEVICE_OS: device.osType,
    DEVICE_OS_VERSION: device.releaseVersion,
    DEVICE_API_LEVEL: device.apiLevel === null ? '' : String(device.apiLevel),
    DEVICE_RUN_ID: String(job.deviceRunId),
    APP_PATH: appPath,
    APP_PACKAGE: job.app?.properties.package_name ?? job.app?.properties.bundle_identifier ?? '',
    OUTPUT_DIR: outputDir,
    SCREENSHOT_DIR: screenshotDir,
    DEVICE_STORAGE: state.storage,
    LOCALE: job.locale,
    ...deviceSettingsEnv(state.settings()),
    TIMEOUT_SECONDS: String(job.timeoutSeconds),
  };
  for (const [key, value] of Object.entries(job.parameters)) if (ENV_NAME.test(key) && !RESERVED.has(key)) env[key] = value;

  context.step('RUNNING');
  const exitCode = await runGroup(
    ['bash', path.basename(script)],
    { cwd, env, logFile, signal: context.signal, onStart: (sid) => state.markRunning(sid) },
    (sample) => context.sample({ timestamp: Date.now(), packageName: env.APP_PACKAGE || null, ...sample }),
  );
  state.clearRunning();
  return {
    outcome: context.signal.aborted ? 'STOPPED' : 'COMPLETED',
    failReason: null,
    testCases: null,
    exitCode,
    artifacts: [...collect(outputDir, screenshotDir), { kind: 'log', path: logFile, name: 'test.log' }],
  };
}

interface GroupOptions {
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly logFile: string;
  readonly signal: AbortSignal;
  /** Called with the session id once the command runs. */
  readonly onStart?: (sid: number) => void;
}

/** Runs a command as its own process group; kills the group on abort. Resolves with the exit code. */
function runGroup(command: readonly string[], options: GroupOptions, onSample: (sample: { cpuUsage: number; memUsage: number }) => void): Promise<number | null> {
  return new Promise((resolve) => {
    const log = fs.createWriteStream(options.logFile);
    let written = 0;
    let truncated = false;
    const child = spawn(command[0]!, command.slice(1), { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    // Output beyond the cap is read and dropped, so a chatty script never blocks on a full pipe.
    const write = (chunk: Buffer) => {
      if (written >= LOG_LIMIT_BYTES) {
        truncated = true;
        return;
      }
      const part = chunk.subarray(0, LOG_LIMIT_BYTES - written);
      written += part.length;
      log.write(part);
    };
    child.stdout.on('data', write);
    child.stderr.on('data', write);
    if (child.pid !== undefined) options.onStart?.(child.pid);
    const stopSampling = child.pid === undefined ? () => undefined : sampleGroup(child.pid, onSample);
    let killTimer: NodeJS.Timeout | undefined;
    const kill = () => {
      signalGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => signalGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS);
    };
    if (options.signal.aborted) kill();
    options.signal.addEventListener('abort', kill, { once: true });
    child.on('error', (error) => write(Buffer.from(`\n[could not start the tests: ${error.message}]\n`)));
    child.on('close', (code) => {
      stopSampling();
      options.signal.removeEventListener('abort', kill);
      // Children that ignored SIGTERM still go when their leader has gone.
      signalGroup(child.pid, 'SIGKILL');
      clearTimeout(killTimer);
      if (truncated) log.write(`\n[log truncated after ${LOG_LIMIT_BYTES} bytes]\n`);
      log.end(() => resolve(code));
    });
  });
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  // The child leads a session of its own (detached), whose id is its pid.
  if (pid !== undefined) signalSession(pid, signal);
}

/** JUnit files, screenshots and any other outputs the tests left in $OUTPUT_DIR. */
function collect(outputDir: string, screenshotDir: string): Artifact[] {
  const artifacts: Artifact[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const kind = kindOf(full, screenshotDir);
        // Screenshots keep their own names where they can; otherwise the folder joins the name, so none collide.
        const plain = kind === 'screenshot' && !artifacts.some((artifact) => artifact.name === entry.name);
        artifacts.push({ kind, path: full, name: plain ? entry.name : path.relative(outputDir, full).replaceAll(path.sep, '_') });
      }
    }
  };
  walk(outputDir);
  return artifacts;
}

function kindOf(file: string, screenshotDir: string): Artifact['kind'] {
  if (file.startsWith(screenshotDir + path.sep) && /\.(png|jpe?g)$/i.test(file)) return 'screenshot';
  if (file.endsWith('.xml') && looksLikeJUnit(file)) return 'junit';
  return 'output';
}

function looksLikeJUnit(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(4096);
    const read = fs.readSync(fd, head, 0, head.length, 0);
    return /<testsuites?[\s>]/.test(head.subarray(0, read).toString('utf8'));
  } finally {
    fs.closeSync(fd);
  }
}

function deviceSettingsEnv(settings: VirtualSettings): Record<string, string> {
  return { DEVICE_LOCALE: settings.locale, DEVICE_WIFI: settings.wifi ? 'on' : 'off', DEVICE_GOOGLE_ACCOUNT: settings.googleAccount ?? '' };
}
