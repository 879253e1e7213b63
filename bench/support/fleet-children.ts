/** The fleet benchmark's side of its child processes (bench/support/fleet-actors.ts): starting them, talking to them. */
import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import type { ActorReport, ChildMessage, ParentMessage } from './fleet-actors.ts';

const ACTORS = path.resolve(import.meta.dirname, 'fleet-actors.ts');

/** A child process of simulated agents or pollers, and what it says. */
export function startActors() {
  const child: ChildProcess = fork(ACTORS, [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  let done = 0;
  let lost = 0;
  const waiting = new Map<string, Array<(message: ChildMessage) => void>>();
  child.on('message', (message: ChildMessage) => {
    if (message.type === 'progress') {
      done = message.done;
      lost = message.lost;
    }
    for (const resolve of waiting.get(message.type)?.splice(0) ?? []) resolve(message);
  });
  const next = <T extends ChildMessage['type']>(type: T) =>
    new Promise<Extract<ChildMessage, { type: T }>>((resolve) =>
      waiting.set(type, [...(waiting.get(type) ?? []), resolve as (message: ChildMessage) => void]),
    );
  return {
    pid: child.pid!,
    done: () => done,
    lost: () => lost,
    send: (message: ParentMessage) => child.send(message),
    next,
    async report(): Promise<ActorReport> {
      const answer = next('report');
      child.send({ type: 'report' } satisfies ParentMessage);
      return (await answer).report;
    },
    async stop() {
      if (!child.connected) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'stop' } satisfies ParentMessage);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export type Actors = ReturnType<typeof startActors>;

export const merged = (reports: readonly ActorReport[]) => ({
  claimMs: reports.flatMap((report) => report.claimMs),
  heartbeatMs: reports.flatMap((report) => report.heartbeatMs),
  heartbeats: reports.reduce((sum, report) => sum + report.heartbeats, 0),
  claims: reports.reduce((sum, report) => sum + report.claims, 0),
  pollMs: reports.flatMap((report) => report.pollMs),
  pollErrors: reports.reduce((sum, report) => sum + report.pollErrors, 0),
  errors: reports.flatMap((report) => report.errors),
});
