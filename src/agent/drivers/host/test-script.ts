/**
 * Server-side test packages, whatever the device: `run-tests.sh` from the uploaded zip runs on
 * the device host with bash, in a fresh sandbox, in a session of its own (so an abort or timeout
 * kills everything it started), with a small documented environment (not the agent's: it may hold
 * secrets). Output goes to a capped log that never blocks the child; results are collected from
 * $OUTPUT_DIR. Each driver adds what its devices need (installing the app, the device's address).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ENV_NAME } from '../../../domain/values.ts';
import { type Artifact, CustomerFault, type ExecutionContext, type Job } from '../../driver.ts';
import { sampleGroup, signalSession } from './process-tree.ts';

export const SCRIPT_LOG_LIMIT_BYTES = 10 * 1024 * 1024;
const KILL_GRACE_MS = 2000;

/** Where a test package runs and leaves its results. */
export interface ScriptLayout {
  /** The folder holding run-tests.sh: the script's working and home directory. */
  readonly cwd: string;
  readonly script: string;
  readonly outputDir: string;
  readonly screenshotDir: string;
  readonly logFile: string;
  readonly tmpDir: string;
}

/** Unpacks the package into the job's work dir and finds run-tests.sh (top level, or one folder down). */
export async function prepareTestScript(job: Job & { readonly tests: NonNullable<Job['tests']> }, context: ExecutionContext): Promise<ScriptLayout | { readonly failReason: string }> {
  const sandbox = path.join(job.workDir, 'tests');
  const outputDir = path.join(job.workDir, 'output');
  const screenshotDir = path.join(outputDir, 'screenshots');
  const logFile = path.join(job.workDir, 'logs', 'test.log');
  const tmpDir = path.join(job.workDir, 'tmp');
  for (const dir of [sandbox, screenshotDir, path.dirname(logFile), tmpDir]) fs.mkdirSync(dir, { recursive: true });
  try {
    await context.unzip(job.tests.path, sandbox);
  } catch (error) {
    const failReason = `the test package could not be unpacked: ${(error as Error).message}`;
    if (error instanceof CustomerFault) throw new CustomerFault(failReason);
    return { failReason };
  }
  const script = ['run-tests.sh', ...fs.readdirSync(sandbox).map((top) => path.join(top, 'run-tests.sh'))].find((candidate) => fs.existsSync(path.join(sandbox, candidate)));
  if (script === undefined) throw new CustomerFault('the test package has no run-tests.sh');
  return { cwd: path.join(sandbox, path.dirname(script)), script: path.basename(script), outputDir, screenshotDir, logFile, tmpDir };
}

/** The variables every test script gets; a driver adds its own, then `withParameters`. */
export function baseScriptEnv(job: Job, layout: ScriptLayout, device: { displayName: string; serial: string; osType: string; releaseVersion: string; apiLevel: number | null }): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: layout.cwd,
    LANG: 'C.UTF-8',
    TMPDIR: layout.tmpDir,
    DEVICE_NAME: device.displayName,
    DEVICE_SERIAL: device.serial,
    DEVICE_OS: device.osType,
    DEVICE_OS_VERSION: device.releaseVersion,
    DEVICE_API_LEVEL: device.apiLevel === null ? '' : String(device.apiLevel),
    DEVICE_RUN_ID: String(job.deviceRunId),
    OUTPUT_DIR: layout.outputDir,
    SCREENSHOT_DIR: layout.screenshotDir,
    LOCALE: job.locale,
    TIMEOUT_SECONDS: String(job.timeoutSeconds),
  };
}

/**
 * The run's parameters join the environment, except where they would replace what the agent set,
 * or `reserved` names the agent sets only on some hosts.
 */
export function withParameters(env: Record<string, string>, parameters: Readonly<Record<string, string>>, reserved: readonly string[] = []): Record<string, string> {
  const merged = { ...env };
  for (const [key, value] of Object.entries(parameters)) if (ENV_NAME.test(key) && !(key in env) && !reserved.includes(key)) merged[key] = value;
  return merged;
}

export interface ScriptRun {
  readonly env: Record<string, string>;
  readonly signal: AbortSignal;
  /** Called with the session id once the script runs. */
  readonly onStart?: (sid: number) => void;
  /** CPU and memory of the script's whole session, once a second (the virtual devices' "app"). */
  readonly onSample?: (sample: { cpuUsage: number; memUsage: number }) => void;
}

/** Runs the script in a session of its own; kills the session on abort (TERM, then KILL). Resolves with the exit code. */
export function runTestScript(layout: ScriptLayout, run: ScriptRun): Promise<number | null> {
  return new Promise((resolve) => {
    const log = fs.createWriteStream(layout.logFile);
    let written = 0;
    let truncated = false;
    const child = spawn('bash', [layout.script], { cwd: layout.cwd, env: run.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
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
    // The child leads a session of its own (detached), whose id is its pid.
    const sid = child.pid;
    if (sid !== undefined) run.onStart?.(sid);
    const stopSampling = sid === undefined || run.onSample === undefined ? () => undefined : sampleGroup(sid, run.onSample);
    let killTimer: NodeJS.Timeout | undefined;
    const kill = () => {
      if (sid !== undefined) signalSession(sid, 'SIGTERM');
      killTimer = setTimeout(() => sid !== undefined && signalSession(sid, 'SIGKILL'), KILL_GRACE_MS);
    };
    if (run.signal.aborted) kill();
    run.signal.addEventListener('abort', kill, { once: true });
    child.on('error', (error) => write(Buffer.from(`\n[could not start the tests: ${error.message}]\n`)));
    child.on('close', (code) => {
      stopSampling();
      run.signal.removeEventListener('abort', kill);
      // Children that ignored SIGTERM still go when their leader has gone.
      if (sid !== undefined) signalSession(sid, 'SIGKILL');
      clearTimeout(killTimer);
      if (truncated) log.write(`\n[log truncated after ${SCRIPT_LOG_LIMIT_BYTES} bytes]\n`);
      log.end(() => resolve(code));
    });
  });
}

/** JUnit files, screenshots and any other outputs the tests left in $OUTPUT_DIR, and the script's log. */
export function collectScriptOutputs(layout: ScriptLayout): Artifact[] {
  const artifacts: Artifact[] = [];
  const walk = (dir: string) => {
    // The tests may have removed or locked what they wrote: what cannot be read is not collected.
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const kind = kindOf(full, layout.screenshotDir);
        // Screenshots keep their own names where they can; otherwise the folder joins the name, so none collide.
        const plain = kind === 'screenshot' && !artifacts.some((artifact) => artifact.name === entry.name);
        artifacts.push({ kind, path: full, name: plain ? entry.name : path.relative(layout.outputDir, full).replaceAll(path.sep, '_') });
      }
    }
  };
  walk(layout.outputDir);
  return [...artifacts, { kind: 'log', path: layout.logFile, name: 'test.log' }];
}

function kindOf(file: string, screenshotDir: string): Artifact['kind'] {
  if (file.startsWith(screenshotDir + path.sep) && /\.(png|jpe?g)$/i.test(file)) return 'screenshot';
  if (file.endsWith('.xml') && looksLikeJUnit(file)) return 'junit';
  return 'output';
}

function looksLikeJUnit(file: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(4096);
    const read = fs.readSync(fd, head, 0, head.length, 0);
    return /<testsuites?[\s>]/.test(head.subarray(0, read).toString('utf8'));
  } finally {
    fs.closeSync(fd);
  }
}
