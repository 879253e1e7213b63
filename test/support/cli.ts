/** Runs the real `devicecloud` binary as a subprocess, as operators and CI scripts do. */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import path from 'node:path';

export const BIN = path.resolve(import.meta.dirname, '../../bin/devicecloud.js');

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

export interface RunningProcess {
  readonly child: ChildProcess;
  readonly output: () => string;
  /** Resolves with the first match of `pattern` in stdout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): RunningProcess {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => stdout + stderr,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        const check = () => {
          const match = stdout.match(pattern);
          if (match) return resolve(match);
          if (child.exitCode !== null) return reject(new Error(`process exited (${child.exitCode}) before printing ${pattern}:\n${stdout}${stderr}`));
          if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${pattern}:\n${stdout}${stderr}`));
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
