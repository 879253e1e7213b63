/**
 * Server-side test packages, whatever the device: `run-tests.sh` from the uploaded zip runs on
 * the device host with bash, in the agent's sandbox (sandbox.ts: bubblewrap, or none where the
 * operator chose so), whose folder `box/` of the run is the only place it writes, with a small
 * documented environment (not the agent's: it holds the agent's token). Everything it starts ends
 * with it; an abort or timeout kills it all. Output goes to a capped log outside its folder that
 * never blocks the child; results are collected from $OUTPUT_DIR once nothing of it runs any more.
 * Each driver adds what its devices need (installing the app, the device's address).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ENV_NAME } from '../../../domain/values.ts';
import { type Artifact, CustomerFault, type ExecutionContext, type Job } from '../../driver.ts';
import type { LimitBreach, Sandbox, SandboxedProcess } from './sandbox.ts';
import { watchLimits } from './sandbox-limits.ts';

export const SCRIPT_LOG_LIMIT_BYTES = 10 * 1024 * 1024;
const KILL_GRACE_MS = 2000;

/** Where a test package runs and leaves its results. */
export interface ScriptLayout {
  /** The script's own folder (tests, output, tmp): the only one it may write. */
  readonly box: string;
  /** The folder holding run-tests.sh: the script's working and home directory. */
  readonly cwd: string;
  readonly script: string;
  readonly outputDir: string;
  readonly screenshotDir: string;
  /** Written by the agent, outside the script's folder. */
  readonly logFile: string;
  readonly tmpDir: string;
}

/** Unpacks the package into the job's work dir and finds run-tests.sh (top level, or one folder down). */
export async function prepareTestScript(
  job: Job & { readonly tests: NonNullable<Job['tests']> },
  context: ExecutionContext,
): Promise<ScriptLayout | { readonly failReason: string }> {
  const box = path.join(job.workDir, 'box');
  const sandbox = path.join(box, 'tests');
  const outputDir = path.join(box, 'output');
  const screenshotDir = path.join(outputDir, 'screenshots');
  const logFile = path.join(job.workDir, 'logs', 'test.log');
  const tmpDir = path.join(box, 'tmp');
  for (const dir of [sandbox, screenshotDir, path.dirname(logFile), tmpDir]) fs.mkdirSync(dir, { recursive: true });
  try {
    await context.unzip(job.tests.path, sandbox);
  } catch (error) {
    const failReason = `the test package could not be unpacked: ${(error as Error).message}`;
    if (error instanceof CustomerFault) throw new CustomerFault(failReason);
    return { failReason };
  }
  const script = ['run-tests.sh', ...fs.readdirSync(sandbox).map((top) => path.join(top, 'run-tests.sh'))].find(
    (candidate) => fs.existsSync(path.join(sandbox, candidate)),
  );
  if (script === undefined) throw new CustomerFault('the test package has no run-tests.sh');
  return {
    box,
    cwd: path.join(sandbox, path.dirname(script)),
    script: path.basename(script),
    outputDir,
    screenshotDir,
    logFile,
    tmpDir,
  };
}

/** The variables every test script gets; a driver adds its own, then `withParameters`. */
export function baseScriptEnv(
  job: Job,
  layout: ScriptLayout,
  device: { displayName: string; serial: string; osType: string; releaseVersion: string; apiLevel: number | null },
): Record<string, string> {
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
export function withParameters(
  env: Record<string, string>,
  parameters: Readonly<Record<string, string>>,
  reserved: readonly string[] = [],
): Record<string, string> {
  const merged = { ...env };
  for (const [key, value] of Object.entries(parameters))
    if (ENV_NAME.test(key) && !(key in env) && !reserved.includes(key)) merged[key] = value;
  return merged;
}

export interface ScriptRun {
  readonly sandbox: Sandbox;
  readonly env: Record<string, string>;
  readonly signal: AbortSignal;
  /** What the driver hands the script besides its folder, at the same paths inside. */
  readonly writable?: readonly string[];
  readonly readOnly?: readonly string[];
  /** A command the script runs under (its parent in the sandbox, which ends with it): e.g. the adb driver's relay. */
  readonly launcher?: readonly string[];
  /** Called with the pid of the sandbox's session leader once the script runs. */
  readonly onStart?: (sid: number) => void;
  /** CPU and memory of everything the script runs, once a second (the virtual devices' "app"). */
  readonly onSample?: (sample: { cpuUsage: number; memUsage: number }) => void;
}

export interface ScriptEnd {
  readonly exitCode: number | null;
  /** The limit the script broke, when it was stopped for that. */
  readonly breach: LimitBreach | null;
  /** Why the sandbox could not start the script: the host's problem, not the tests'. */
  readonly startError: string | null;
}

/** Runs the script in the sandbox; ends it on abort (TERM, then KILL) or on a broken limit. */
export function runTestScript(layout: ScriptLayout, run: ScriptRun): Promise<ScriptEnd> {
  return new Promise((resolve) => {
    const log = fs.createWriteStream(layout.logFile);
    let written = 0;
    let truncated = false;
    let breach: LimitBreach | null = null;
    const writable = [layout.box, ...(run.writable ?? [])];
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
    let sandboxed;
    try {
      sandboxed = run.sandbox.spawn({
        writable,
        readOnly: run.readOnly ?? [],
        cwd: layout.cwd,
        env: run.env,
        command: ['bash', layout.script],
        ...(run.launcher !== undefined && { launcher: run.launcher }),
      });
    } catch (error) {
      const startError = (error as Error).message;
      write(Buffer.from(`[could not start the tests: ${startError}]\n`));
      log.end(() => resolve({ exitCode: null, breach: null, startError }));
      return;
    }
    const { child } = sandboxed;
    child.stdout!.on('data', write);
    child.stderr!.on('data', write);
    if (sandboxed.pid !== undefined) run.onStart?.(sandboxed.pid);
    let killTimer: NodeJS.Timeout | undefined;
    const kill = () => {
      sandboxed.terminate();
      killTimer ??= setTimeout(() => sandboxed.kill(), KILL_GRACE_MS);
    };
    const stopWatching = watchLimits({
      limits: run.sandbox.limits,
      members: () => sandboxed.members(),
      writable,
      onSample: run.onSample,
      onBreach: (found) => {
        breach = found;
        write(Buffer.from(`\n[${found.message}]\n`));
        sandboxed.kill();
      },
    });
    if (run.signal.aborted) kill();
    run.signal.addEventListener('abort', kill, { once: true });
    let startError: string | null = null;
    child.on('error', (error) => {
      startError = error.message;
      write(Buffer.from(`\n[could not start the tests: ${error.message}]\n`));
    });
    child.on('close', async (code) => {
      stopWatching();
      run.signal.removeEventListener('abort', kill);
      clearTimeout(killTimer);
      // Whatever ignored SIGTERM, or was left behind, goes now, and is gone before the outputs are
      // read: nothing of the script may change its folder while the agent collects from it.
      await endAll(sandboxed);
      if (truncated) log.write(`\n[log truncated after ${SCRIPT_LOG_LIMIT_BYTES} bytes]\n`);
      log.end(() => resolve({ exitCode: code, breach, startError }));
    });
  });
}

const END_WAIT_MS = 5000;

/**
 * Kills what is left inside until nothing is (SIGKILL lands when each process is next scheduled).
 * Looked at first: most scripts leave nothing, and a session with no live member can gain none,
 * so one scan of /proc ends it (each scan reads every process's stat: a few ms on a busy host).
 */
async function endAll(sandboxed: SandboxedProcess): Promise<void> {
  const started = Date.now();
  while (!sandboxed.members().every((member) => member.state === 'Z') && Date.now() - started <= END_WAIT_MS) {
    sandboxed.kill();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
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
      // Only plain files with one name: a link could point the upload at a file of the host.
      else if (entry.isFile() && fs.lstatSync(full).nlink === 1) {
        const kind = kindOf(full, layout.screenshotDir);
        // Screenshots keep their own names where they can; otherwise the folder joins the name, so none collide.
        const plain = kind === 'screenshot' && !artifacts.some((artifact) => artifact.name === entry.name);
        artifacts.push({
          kind,
          path: full,
          name: plain ? entry.name : path.relative(layout.outputDir, full).replaceAll(path.sep, '_'),
        });
      }
    }
  };
  // The tests may have put a link to a folder of the host in place of $OUTPUT_DIR: walked, it
  // would upload what the agent can read there. Only the real folder is walked (links below it
  // are neither files nor folders to readdir's entries, so they are skipped already).
  if (isRealFolder(layout.outputDir)) walk(layout.outputDir);
  return [...artifacts, { kind: 'log', path: layout.logFile, name: 'test.log' }];
}

function isRealFolder(dir: string): boolean {
  try {
    return fs.lstatSync(dir).isDirectory();
  } catch {
    return false;
  }
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
