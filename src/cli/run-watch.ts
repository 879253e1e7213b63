/**
 * Follows a run until it finishes, showing each device's state, step and test counts: redrawn in
 * place on a terminal, as one plain line per change otherwise (CI logs). Then the exit code the
 * outcome means.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DevicecloudClient } from '../client/api-client.ts';
import type { ApiDeviceSession, ApiTestRun } from '../client/api-types.ts';
import { EXIT } from './cli-error.ts';

export interface WatchOptions {
  readonly pollMs: number;
  readonly out: NodeJS.WriteStream;
  readonly signal: AbortSignal;
}

export interface Finished {
  readonly run: ApiTestRun;
  readonly sessions: ApiDeviceSession[];
}

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'WARNING', 'TIMEOUT', 'ABORTED', 'EXCLUDED']);

export async function watchRun(
  client: DevicecloudClient,
  runId: number,
  options: WatchOptions,
): Promise<Finished | undefined> {
  const tty = options.out.isTTY === true;
  const shown = new Map<number, string>();
  let drawn = 0;
  let lastMessage: string | null = null;
  while (!options.signal.aborted) {
    const [run, sessions, steps] = await Promise.all([
      client.run(runId),
      client.deviceSessions(runId),
      client.currentSteps(runId),
    ]);
    const lines = sessions.map((session) => describe(session, steps.get(session.id)));
    if (tty) {
      if (drawn > 0) options.out.write(`\x1b[${drawn}A`);
      const header = `Run ${run.id} ${run.state}${run.message ? `: ${run.message}` : ''}`;
      const block = [header, ...lines];
      for (const line of block) options.out.write(`\x1b[2K${line.slice(0, (options.out.columns ?? 120) - 1)}\n`);
      drawn = block.length;
    } else {
      if (run.message !== null && run.message !== lastMessage)
        options.out.write(`${stamp()} run ${run.id}: ${run.message}\n`);
      lastMessage = run.message;
      sessions.forEach((session, index) => {
        const line = lines[index]!;
        if (shown.get(session.id) !== line) options.out.write(`${stamp()} ${line}\n`);
        shown.set(session.id, line);
      });
    }
    if (run.state === 'FINISHED' && sessions.every((session) => FINAL.has(session.state))) return { run, sessions };
    await sleep(options.pollMs, undefined, { signal: options.signal }).catch(() => undefined);
  }
  return undefined;
}

function describe(session: ApiDeviceSession, step: string | undefined): string {
  const counts =
    session.testCaseAllCount > 0
      ? `, ${session.testCasePassedCount} passed, ${session.testCaseFailedCount} failed`
      : '';
  const detail =
    session.state === 'RUNNING' && step
      ? ` (${step})`
      : session.state === 'EXCLUDED' && session.excludeReason
        ? ` (${session.excludeReason})`
        : '';
  return `${session.device.displayName}: ${session.state}${detail}${counts}`;
}

/**
 * 0 when every device run succeeded; 1 when tests failed; 2 when the cloud could not finish
 * (WARNING, TIMEOUT, ABORTED, or nothing could run). Failed tests win: they are what to fix.
 */
export function exitCodeOf(sessions: readonly ApiDeviceSession[]): number {
  if (sessions.some((session) => session.state === 'FAILED' || session.testCaseFailedCount > 0))
    return EXIT.TESTS_FAILED;
  if (sessions.some((session) => ['WARNING', 'TIMEOUT', 'ABORTED'].includes(session.state))) return EXIT.INFRASTRUCTURE;
  if (!sessions.some((session) => session.state === 'SUCCEEDED')) return EXIT.INFRASTRUCTURE;
  return EXIT.OK;
}

function stamp(): string {
  return `[${new Date().toISOString().slice(11, 19)}]`;
}
