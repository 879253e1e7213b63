/**
 * Server-side packages (Appium server side, Calabash, anything with `run-tests.sh`) against a
 * real phone: the script runs on the host, in a session of its own, with a small documented
 * environment that points its adb at this phone (ANDROID_SERIAL) through the same ADB server
 * (ADB_SERVER_SOCKET, ANDROID_ADB_SERVER_PORT). Meanwhile the app's CPU and memory are sampled on
 * the phone and its log is captured. A stop kills the script's whole session and force-stops the app.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ENV_NAME } from '../../../domain/values.ts';
import type { Artifact, ExecutionContext, ExecutionResult, Job } from '../../driver.ts';
import { signalSession } from '../virtual/process-tree.ts';
import { type AdbDevice, RunSession, infra } from './session.ts';

export const SCRIPT_LOG_LIMIT_BYTES = 10 * 1024 * 1024;
const KILL_GRACE_MS = 2000;
const PLAIN_PATH = '/usr/local/bin:/usr/bin:/bin';

/** Variables the agent sets; run parameters may not replace them. */
const RESERVED = new Set([
  'PATH', 'HOME', 'LANG', 'TMPDIR', 'DEVICE_NAME', 'DEVICE_SERIAL', 'DEVICE_OS', 'DEVICE_OS_VERSION', 'DEVICE_API_LEVEL', 'DEVICE_RUN_ID',
  'APP_PATH', 'APP_PACKAGE', 'APP_ACTIVITY', 'OUTPUT_DIR', 'SCREENSHOT_DIR', 'LOCALE', 'TIMEOUT_SECONDS',
  'ANDROID_SERIAL', 'ANDROID_ADB_SERVER_PORT', 'ANDROID_ADB_SERVER_ADDRESS', 'ADB_SERVER_SOCKET', 'ANDROID_HOME', 'ANDROID_SDK_ROOT',
]);

export interface AdbServerAddress {
  readonly host: string;
  readonly port: number;
}

export async function runServerSide(job: Job, context: ExecutionContext, device: AdbDevice, server: AdbServerAddress, hostEnv: NodeJS.ProcessEnv): Promise<ExecutionResult> {
  if (job.tests === null) return infra('no test package (a zip with run-tests.sh) was given');
  if (job.app !== null && !/\.apk$/i.test(job.app.name)) return infra(`${job.app.name} is not an Android app (APK)`);
  const appPackage = job.app?.properties.package_name ?? null;
  const session = new RunSession(job, context, device);
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

  const refused = await session.install(job.app === null ? [] : [job.app], appPackage === null ? [] : [appPackage]);
  if (refused !== null) return refused;

  const { description } = device;
  const env: Record<string, string> = {
    PATH: scriptPath(hostEnv),
    HOME: cwd,
    LANG: 'C.UTF-8',
    TMPDIR: path.join(job.workDir, 'tmp'),
    DEVICE_NAME: description.displayName,
    DEVICE_SERIAL: description.serial,
    DEVICE_OS: 'ANDROID',
    DEVICE_OS_VERSION: description.releaseVersion,
    DEVICE_API_LEVEL: description.apiLevel === null ? '' : String(description.apiLevel),
    DEVICE_RUN_ID: String(job.deviceRunId),
    APP_PATH: job.app?.path ?? '',
    APP_PACKAGE: appPackage ?? '',
    APP_ACTIVITY: job.app?.properties.main_activity ?? '',
    OUTPUT_DIR: outputDir,
    SCREENSHOT_DIR: screenshotDir,
    LOCALE: job.locale,
    TIMEOUT_SECONDS: String(job.timeoutSeconds),
    ANDROID_SERIAL: description.serial,
    ANDROID_ADB_SERVER_ADDRESS: server.host,
    ANDROID_ADB_SERVER_PORT: String(server.port),
    ADB_SERVER_SOCKET: `tcp:${server.host}:${server.port}`,
  };
  // Appium's UiAutomator2 driver finds adb through these; they hold no secrets.
  for (const name of ['ANDROID_HOME', 'ANDROID_SDK_ROOT'] as const) if (hostEnv[name]) env[name] = hostEnv[name];
  for (const [key, value] of Object.entries(job.parameters)) if (ENV_NAME.test(key) && !RESERVED.has(key)) env[key] = value;

  context.step('RUNNING');
  try {
    await session.monitor(appPackage);
  } catch (error) {
    return await session.failure(error, 'starting the device log');
  }
  const exitCode = await runScript(['bash', path.basename(script)], cwd, env, logFile, context.signal);
  if (appPackage !== null) await session.forceStop([appPackage]);
  const lost = !context.signal.aborted && (await session.lost());
  const artifacts = [...(await session.finish(true)), ...collect(outputDir, screenshotDir), { kind: 'log' as const, path: logFile, name: 'test.log' }];
  if (context.signal.aborted) return { outcome: 'STOPPED', failReason: null, testCases: null, exitCode, artifacts };
  if (lost) return infra('the phone went away during the tests', artifacts);
  return { outcome: 'COMPLETED', failReason: null, testCases: null, exitCode, artifacts };
}

/** A plain PATH, plus wherever the host's adb is, so that scripts (and Appium) find it. */
export function scriptPath(hostEnv: NodeJS.ProcessEnv): string {
  const dirs = PLAIN_PATH.split(':');
  const sdk = hostEnv.ANDROID_HOME ?? hostEnv.ANDROID_SDK_ROOT;
  const candidates = [...(hostEnv.PATH ?? '').split(':'), ...(sdk ? [path.join(sdk, 'platform-tools')] : [])];
  const adbDir = candidates.find((dir) => dir !== '' && path.isAbsolute(dir) && fs.existsSync(path.join(dir, 'adb')));
  return adbDir === undefined || dirs.includes(adbDir) ? PLAIN_PATH : `${adbDir}:${PLAIN_PATH}`;
}

/** Runs the script in a session of its own; kills the session on abort (TERM, then KILL). Resolves with the exit code. */
function runScript(command: readonly string[], cwd: string, env: Record<string, string>, logFile: string, signal: AbortSignal): Promise<number | null> {
  return new Promise((resolve) => {
    const log = fs.createWriteStream(logFile);
    let written = 0;
    let truncated = false;
    const child = spawn(command[0]!, command.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    // Output beyond the cap is read and dropped, so a chatty script never blocks on a full pipe.
    const write = (chunk: Buffer) => {
      if (written >= SCRIPT_LOG_LIMIT_BYTES) {
        truncated = true;
        return;
      }
      const part = chunk.subarray(0, SCRIPT_LOG_LIMIT_BYTES - written);
      written += part.length;
      log.write(part);
    };
    child.stdout.on('data', write);
    child.stderr.on('data', write);
    let killTimer: NodeJS.Timeout | undefined;
    const kill = () => {
      if (child.pid !== undefined) signalSession(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => child.pid !== undefined && signalSession(child.pid, 'SIGKILL'), KILL_GRACE_MS);
    };
    if (signal.aborted) kill();
    signal.addEventListener('abort', kill, { once: true });
    child.on('error', (error) => write(Buffer.from(`\n[could not start the tests: ${error.message}]\n`)));
    child.on('close', (code) => {
      signal.removeEventListener('abort', kill);
      // Children that ignored SIGTERM still go when their leader has gone.
      if (child.pid !== undefined) signalSession(child.pid, 'SIGKILL');
      clearTimeout(killTimer);
      if (truncated) log.write(`\n[log truncated after ${SCRIPT_LOG_LIMIT_BYTES} bytes]\n`);
      log.end(() => resolve(code));
    });
  });
}

/** JUnit files, screenshots and any other outputs the tests left in $OUTPUT_DIR. */
function collect(outputDir: string, screenshotDir: string): Artifact[] {
  const artifacts: Artifact[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const shot = full.startsWith(screenshotDir + path.sep) && /\.(png|jpe?g)$/i.test(full);
        const kind = shot ? 'screenshot' : full.endsWith('.xml') && looksLikeJUnit(full) ? 'junit' : 'output';
        // Keep the names users gave their files where they are unique; else the folder joins the name.
        const plain = shot && !artifacts.some((artifact) => artifact.name === entry.name);
        artifacts.push({ kind, path: full, name: plain ? entry.name : path.relative(outputDir, full).replaceAll(path.sep, '_') });
      }
    }
  };
  walk(outputDir);
  return artifacts;
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
