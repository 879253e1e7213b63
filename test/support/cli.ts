/** Runs the real `devicecloud` binary as a subprocess, as operators and CI scripts do. */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import path from 'node:path';

export const BIN = path.resolve(import.meta.dirname, '../../bin/devicecloud.js');

/**
 * How long one start of the CLI may take before a test calls it stuck: idle it is a few seconds
 * (tsx transpiles at start); on a loaded 2-core machine (load 16) `devicecloud local` took
 * over a minute to say it was running. Tests and hooks that start the
 * CLI n times allow n of these, so that their deadline grows with the work they do.
 */
export const CLI_START_MS = 180_000;

/** A test's or hook's timeout for `starts` starts of the CLI, plus `extraMs` for the rest of its work. */
export const cliBudget = (starts: number, extraMs = 30_000) => starts * CLI_START_MS + extraMs;

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI to its end; `timeoutMs` kills it (a command that waits for a run needs more than a start). */
export function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = CLI_START_MS,
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export interface RunningProcess {
  readonly child: ChildProcess;
  readonly output: () => string;
  /** Resolves with the first match of `pattern` in stdout; fails after `timeoutMs` without new output. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): RunningProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => stdout + stderr,
    waitFor(pattern, timeoutMs = CLI_START_MS) {
      return new Promise((resolve, reject) => {
        let moved = Date.now();
        let seen = -1;
        const check = () => {
          const match = stdout.match(pattern);
          if (match) return resolve(match);
          if (child.exitCode !== null)
            return reject(
              new Error(`process exited (${child.exitCode}) before printing ${pattern}:\n${stdout}${stderr}`),
            );
          // Output is progress: a process still printing is slow, not stuck.
          if (stdout.length + stderr.length !== seen) {
            seen = stdout.length + stderr.length;
            moved = Date.now();
          } else if (Date.now() - moved > timeoutMs)
            return reject(new Error(`no output for ${timeoutMs} ms while waiting for ${pattern}:\n${stdout}${stderr}`));
          setTimeout(check, 50);
        };
        check();
      });
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
