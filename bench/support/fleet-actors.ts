/**
 * The actors of the fleet benchmark, in a child process of their own (forked with an IPC channel):
 * simulated device hosts speaking the real agent protocol over HTTP (hello, cleaned, heartbeat,
 * long-polled claims, a result and a cleaned report per device run, the tests taking no time), or
 * CI clients polling their runs' status. The parent says what to do; the child reports figures.
 *
 * Messages from the parent: `{ type: 'agents', agents }` (register them, then heartbeat and claim),
 * `{ type: 'pause' }`, `{ type: 'go' }`, `{ type: 'pollers', pollers }`, `{ type: 'report' }`,
 * `{ type: 'stop' }`. To the parent: `registered`, `progress` (device runs done), `report`.
 */
import { PROTOCOL_PREFIX, PROTOCOL_VERSION } from '../../src/protocol/v1.ts';
import type { Assignment, ClaimResponse, HelloResponse } from '../../src/protocol/v1.ts';

export interface AgentPlan {
  readonly token: string;
  readonly server: string;
  readonly name: string;
  readonly devices: number;
}

export interface PollerPlan {
  readonly server: string;
  readonly apiKey: string;
  readonly runId: number;
  readonly everyMs: number;
}

export type ParentMessage =
  | { type: 'agents'; agents: AgentPlan[]; heartbeatMs: number; claimWaitMs: number }
  | { type: 'pause' }
  | { type: 'go' }
  | { type: 'pollers'; pollers: PollerPlan[] }
  | { type: 'report' }
  | { type: 'stop' };

export interface ActorReport {
  /** Durations of claims that handed out work, ms. */
  readonly claimMs: number[];
  /** Durations of heartbeats, ms. */
  readonly heartbeatMs: number[];
  readonly heartbeats: number;
  readonly claims: number;
  /** Polls of a run's status, ms. */
  readonly pollMs: number[];
  readonly pollErrors: number;
  readonly errors: string[];
}

export type ChildMessage =
  | { type: 'registered'; devices: number }
  | { type: 'progress'; done: number; lost: number }
  | { type: 'report'; report: ActorReport };

const send = (message: ChildMessage) => process.send!(message);

const report = {
  claimMs: [] as number[],
  heartbeatMs: [] as number[],
  heartbeats: 0,
  claims: 0,
  pollMs: [] as number[],
  pollErrors: 0,
  errors: [] as string[],
};
const noteError = (error: unknown) => {
  if (report.errors.length >= 20) return;
  report.errors.push((error as Error).message);
  process.stderr.write(`[fleet actor] ${(error as Error).message}\n`);
};

const stopping = new AbortController();
let paused = true;
const resumed: Array<() => void> = [];
let done = 0;
/** Device runs whose result came after their lease ran out (the server had ended them). */
let lost = 0;
let registeredDevices = 0;
/** Every agent's current claim, aborted to claim again (a device freed) or to pause. */
const rounds = new Set<AbortController>();

async function post<T>(plan: AgentPlan, route: string, body: unknown, signal?: AbortSignal): Promise<T> {
  const response = await fetch(`${plan.server}${PROTOCOL_PREFIX}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${plan.token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${route}: ${response.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

const waitForResume = () => (paused ? new Promise<void>((resolve) => resumed.push(resolve)) : Promise.resolve());

/** One device host: its devices are free, running, or being cleaned; the tests take no time. */
async function runAgent(plan: AgentPlan, heartbeatMs: number, claimWaitMs: number): Promise<number> {
  const hello = await post<HelloResponse>(plan, '/hello', {
    protocol: PROTOCOL_VERSION,
    agentVersion: 'fleet-bench',
    hostname: plan.name,
    devices: Array.from({ length: plan.devices }, (_, index) => ({
      serial: `${plan.name}-${index}`,
      displayName: `Fleet ${plan.name} ${index}`,
      manufacturer: 'Fleet',
      osType: 'ANDROID',
      platform: 'ANDROID',
      releaseVersion: '14',
      apiLevel: 34,
      executionKinds: ['server-side'],
    })),
  });
  const free = new Set<number>();
  const running = new Set<number>();
  let round: AbortController | undefined;
  const clean = async (deviceId: number) => {
    await post(plan, `/devices/${deviceId}/cleaned`, { ok: true, report: 'clean' });
    free.add(deviceId);
    round?.abort();
  };
  for (const { deviceId } of hello.devices) {
    await clean(deviceId);
    registeredDevices += 1;
  }

  const execute = async (assignment: Assignment) => {
    running.add(assignment.deviceRunId);
    try {
      await post(plan, `/device-runs/${assignment.deviceRunId}/result`, {
        seq: 1,
        outcome: 'SUCCEEDED',
        failReason: null,
        testCases: [],
      });
      done += 1;
    } catch (error) {
      // Its lease ran out before the result came (the machine too slow for the size): it ended,
      // as a WARNING the server retries or keeps; counted apart, so that the end is still seen.
      if ((error as Error).message.includes(': 409 ')) {
        lost += 1;
        done += 1;
      } else noteError(error);
    } finally {
      running.delete(assignment.deviceRunId);
    }
    await clean(assignment.deviceId);
  };

  const heartbeats = (async () => {
    while (!stopping.signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, heartbeatMs * (0.9 + Math.random() * 0.2)));
      if (stopping.signal.aborted) return;
      const started = performance.now();
      try {
        const stop = await post<{ abort: number[] }>(plan, '/heartbeat', { running: [...running], unhealthy: [] });
        report.heartbeatMs.push(performance.now() - started);
        report.heartbeats += 1;
        for (const id of stop.abort) running.delete(id);
      } catch (error) {
        noteError(error);
      }
    }
  })();

  while (!stopping.signal.aborted) {
    await waitForResume();
    if (stopping.signal.aborted) break;
    round = new AbortController();
    const current = round;
    rounds.add(current);
    const onStop = () => current.abort();
    stopping.signal.addEventListener('abort', onStop, { once: true });
    try {
      if (free.size === 0) {
        // Woken by a device freed (clean() aborts the round), a pause, or the end.
        await new Promise((resolve) => current.signal.addEventListener('abort', resolve, { once: true }));
        continue;
      }
      const started = performance.now();
      const answer = await post<ClaimResponse>(
        plan,
        '/claims',
        { deviceIds: [...free], running: [...running], waitMs: claimWaitMs },
        current.signal,
      );
      report.claims += 1;
      if (answer.assignments.length > 0) report.claimMs.push(performance.now() - started);
      for (const id of answer.abort) running.delete(id);
      for (const deviceId of answer.clean) {
        free.delete(deviceId);
        void clean(deviceId).catch(noteError);
      }
      for (const assignment of answer.assignments) {
        if (!free.delete(assignment.deviceId)) continue;
        void execute(assignment);
      }
    } catch (error) {
      if (!current.signal.aborted) {
        noteError(error);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } finally {
      rounds.delete(current);
      stopping.signal.removeEventListener('abort', onStop);
    }
  }
  await heartbeats;
  return hello.devices.length;
}

/** A CI client asking for its run's status every `everyMs`, starting at a random moment. */
async function runPoller(plan: PollerPlan): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * plan.everyMs));
  while (!stopping.signal.aborted) {
    const started = performance.now();
    try {
      const response = await fetch(`${plan.server}/api/v2/runs/${plan.runId}`, {
        headers: { authorization: `Basic ${Buffer.from(`${plan.apiKey}:`).toString('base64')}` },
      });
      await response.arrayBuffer();
      if (response.ok) report.pollMs.push(performance.now() - started);
      else report.pollErrors += 1;
    } catch {
      report.pollErrors += 1;
    }
    await new Promise((resolve) => setTimeout(resolve, plan.everyMs));
  }
}

const agentLoops: Array<Promise<unknown>> = [];
const progress = setInterval(() => send({ type: 'progress', done, lost }), 250);

process.on('message', (message: ParentMessage) => {
  switch (message.type) {
    case 'agents': {
      paused = false;
      const expected = message.agents.reduce((sum, plan) => sum + plan.devices, 0);
      for (const plan of message.agents)
        agentLoops.push(runAgent(plan, message.heartbeatMs, message.claimWaitMs).catch(noteError));
      void (async () => {
        // Registration is announced once every device said hello and was reported clean.
        while (registeredDevices < expected && !stopping.signal.aborted)
          await new Promise((resolve) => setTimeout(resolve, 100));
        send({ type: 'registered', devices: registeredDevices });
      })();
      break;
    }
    case 'pause':
      paused = true;
      for (const round of rounds) round.abort();
      break;
    case 'go':
      paused = false;
      for (const resume of resumed.splice(0)) resume();
      break;
    case 'pollers':
      for (const plan of message.pollers) void runPoller(plan);
      break;
    case 'report':
      send({ type: 'report', report });
      report.claimMs = [];
      report.heartbeatMs = [];
      report.pollMs = [];
      report.heartbeats = 0;
      report.claims = 0;
      report.pollErrors = 0;
      break;
    case 'stop':
      stopping.abort();
      clearInterval(progress);
      for (const resume of resumed.splice(0)) resume();
      void Promise.all(agentLoops).then(() => process.disconnect());
      break;
  }
});
