/**
 * The agent's side of scheduling: hello (register devices, recover from a restart), heartbeat
 * (liveness, lease renewal, what to stop) and claims (the queue, long-polled).
 */
import { cleaningKind } from '../domain/flavours.ts';
import { agentInputRetentionMs } from '../domain/retention.ts';
import type { Agent } from '../domain/agents.ts';
import {
  type Assignment,
  type ClaimRequest,
  type ClaimResponse,
  type DevicesRequest,
  type DevicesResponse,
  type HeartbeatRequest,
  type HelloRequest,
  type HelloResponse,
  PROTOCOL_VERSION,
  type StopList,
} from '../protocol/v1.ts';
import { InvalidParameterError } from '../domain/errors.ts';
import type { DeviceRun, TestRun } from '../domain/runs.ts';
import type { UserFile } from '../domain/files.ts';
import { assignmentOf } from '../domain/assignment.ts';
import type { RunSecrets } from '../domain/run-settings.ts';
import { agentTopic } from '../store/notifier.ts';
import type { Store } from '../store/store.ts';
import type { ClaimTurn, ClaimTurns } from './claim-turns.ts';
import type { Context } from './context.ts';
import { type Wakeups, endDeviceRun, refreshRunState, wake } from './run-lifecycle.ts';
import { runSecretsOf } from './run-secrets.ts';
import type { KeyRing } from './secret-box.ts';

export async function hello(ctx: Context, agent: Agent, request: HelloRequest): Promise<HelloResponse> {
  if (request.protocol !== PROTOCOL_VERSION) {
    throw new InvalidParameterError(
      'protocol',
      `This server speaks agent protocol ${PROTOCOL_VERSION}; the agent speaks ${request.protocol}. Upgrade the older of the two.`,
    );
  }
  const now = ctx.clock();
  const wakeups: Wakeups = new Set();
  const devices = await ctx.store.transaction(async (store) => {
    await store.agents.seen(agent.id, now, { hostname: request.hostname, version: request.agentVersion });
    // A (re)starting agent has lost whatever it was running: those device runs failed outside the tests.
    for (const deviceRunId of await store.queue.heldBy(agent.id)) {
      const deviceRun = await store.deviceRuns.findById(deviceRunId);
      if (deviceRun)
        await endDeviceRun(
          store,
          now,
          deviceRun,
          { state: 'WARNING', failReason: 'the agent restarted while the device run was in progress', testCases: null },
          wakeups,
        );
    }
    return registerDevices(store, agent, request.devices, now);
  });
  wake(ctx, wakeups);
  return {
    agentId: agent.id,
    devices,
    heartbeatMs: ctx.limits.heartbeatMs,
    leaseMs: ctx.limits.leaseMs,
    claimWaitMs: ctx.limits.claimWaitMs,
    cleaning: cleaningKind(ctx.flavour),
    inputRetentionMs: agentInputRetentionMs(ctx.flavour),
    flavour: ctx.flavour,
  };
}

/** Devices that appeared on the agent's host since its hello (a phone plugged in). */
export async function addDevices(ctx: Context, agent: Agent, request: DevicesRequest): Promise<DevicesResponse> {
  const now = ctx.clock();
  return { devices: await ctx.store.transaction((store) => registerDevices(store, agent, request.devices, now)) };
}

async function registerDevices(
  store: Store,
  agent: Agent,
  reports: HelloRequest['devices'],
  now: number,
): Promise<DevicesResponse['devices']> {
  const registered = [];
  for (const report of reports) {
    const device = await store.devices.upsertFromAgent(agent.id, report, now);
    // Devices are cleaned by the agent before they take work; NOT_OPERATIONAL stays until an operator acts.
    await store.devices.transition(device.id, 'register');
    await store.devices.addToGroup((await publicGroupFor(store, device.osType, now)).id, [device.id]);
    registered.push({ serial: report.serial, deviceId: device.id });
  }
  return registered;
}

/** Every device is in the service's public group of its OS, so users always have a group to run on. */
export const PUBLIC_GROUP_NAMES = { ANDROID: 'All Android devices', IOS: 'All iOS devices' } as const;

async function publicGroupFor(store: Store, osType: 'ANDROID' | 'IOS', now: number) {
  const existing = await store.devices.findPublicGroup(PUBLIC_GROUP_NAMES[osType], osType);
  return existing ?? store.devices.insertGroup(null, PUBLIC_GROUP_NAMES[osType], osType, now);
}

/**
 * While no server ran, agents could not report: on start, they get a full lease and heartbeat
 * period before their device runs are given up, so a restarted server loses nothing that is
 * still running on a device.
 */
export async function graceAfterStart(ctx: Context): Promise<void> {
  const now = ctx.clock();
  await ctx.store.transaction(async (store) => {
    await store.agents.seenAll(now);
    await store.queue.extendAllLeases(now + ctx.limits.leaseMs);
  });
}

export async function heartbeat(ctx: Context, agent: Agent, request: HeartbeatRequest): Promise<StopList> {
  const now = ctx.clock();
  await ctx.store.agents.seen(agent.id, now);
  await ctx.store.devices.setAgentOnline(agent.id, true, now);
  for (const { deviceId } of request.unhealthy) {
    const device = await ctx.store.devices.findById(deviceId);
    if (device?.agentId === agent.id) await ctx.store.devices.setOnline(deviceId, false);
  }
  await ctx.store.queue.extendLeases(agent.id, request.running, now + ctx.limits.leaseMs);
  return {
    abort: await ctx.store.queue.endedAmong(agent.id, request.running),
    clean: await ctx.store.devices.cleaningOf(agent.id),
  };
}

/**
 * Gives the agent's free devices their next device runs. Without work the request waits (up to
 * `waitMs`) for a notification: new work for one of its devices, or an abort of one of its runs.
 */
export async function claim(
  ctx: Context,
  agent: Agent,
  request: ClaimRequest,
  signal: AbortSignal,
  turns?: ClaimTurns,
): Promise<ClaimResponse> {
  // A wall-clock wait, not domain time: the clock of the context may be a test's.
  const deadline = performance.now() + Math.min(request.waitMs ?? ctx.limits.claimWaitMs, ctx.limits.claimWaitMs);
  for (;;) {
    // Subscribe before looking, so that work created while we look is not missed.
    const stopWaiting = new AbortController();
    const stop = () => stopWaiting.abort();
    signal.addEventListener('abort', stop, { once: true });
    const notified = ctx.notifier.wait(
      agentTopic(agent.id),
      Math.max(0, deadline - performance.now()),
      stopWaiting.signal,
    );
    try {
      const turn = await turns?.take(agent.id);
      let assignments: Assignment[];
      try {
        assignments = await claimOnce(ctx, agent, request.deviceIds, request.running, turn);
      } finally {
        turn?.release();
      }
      // This answer may never arrive (the agent hung up to claim again with more devices, or this
      // server dies now). A newer claim of the agent that looked for undelivered work before this
      // commit is waiting: wake it to look again.
      if (assignments.length > 0) ctx.notifier.notify(agentTopic(agent.id));
      const abort = await ctx.store.queue.endedAmong(agent.id, request.running);
      const clean = await ctx.store.queue.releaseStranded(agent.id, request.deviceIds);
      if (
        assignments.length > 0 ||
        abort.length > 0 ||
        clean.length > 0 ||
        performance.now() >= deadline ||
        signal.aborted
      )
        return { assignments, abort, clean };
      await notified;
    } finally {
      stopWaiting.abort();
      signal.removeEventListener('abort', stop);
      await notified;
    }
  }
}

async function claimOnce(
  ctx: Context,
  agent: Agent,
  deviceIds: readonly number[],
  running: readonly number[],
  turn: ClaimTurn | undefined,
): Promise<Assignment[]> {
  const now = ctx.clock();
  await ctx.store.agents.seen(agent.id, now);
  const assignments: Assignment[] = [];
  // Devices of one claim mostly take device runs of the same run: its config and files are read once.
  const inputs: RunInputsCache = new Map();
  // An agent whose previous claim it gave up on (or lost on the way) gets those device runs again.
  for (const lost of await ctx.store.queue.undelivered(agent.id, deviceIds, running))
    assignments.push(await buildAssignment(ctx.store, ctx.keyRing, lost, inputs));
  const taken = new Set(assignments.map((assignment) => assignment.deviceId));
  const withWork = await ctx.store.queue.withWaitingWork(deviceIds.filter((id) => !taken.has(id)));
  for (const deviceId of deviceIds.filter((id) => withWork.has(id))) {
    if (turn?.superseded()) break;
    const assignment = await ctx.store.transaction(async (store) => {
      const claimed = await store.queue.claimNext(deviceId, agent.id, now, now + ctx.limits.leaseMs);
      if (claimed === undefined) return undefined;
      const { deviceRun, runRunning } = claimed;
      // Closes the WAITING step the device run was created with (the run's steps count it).
      await store.deviceRuns.appendStep(deviceRun.id, 'PREPARING', now);
      if (deviceRun.singleGroup !== null) {
        for (const sibling of await store.queue.siblingsOfSingle(deviceRun.id)) {
          await store.deviceRuns.transition(sibling, 'exclude', {
            endTime: now,
            excludeReason: 'NO_DEVICE',
            failReason: 'the run used another device (scheduler SINGLE)',
          });
        }
      }
      const assignment = await buildAssignment(store, ctx.keyRing, deviceRun, inputs);
      // The run's state follows from its device runs, like every other change of them: this one,
      // RUNNING now, makes it RUNNING. Last, so that the run's row lock (PostgreSQL) is held only until the commit.
      // A run already RUNNING (as the other devices' claims of it left it) stays so without its lock:
      // it cannot finish while this device run is unfinished, nor be reopened while it is not
      // FINISHED. Only the run's first claim takes the lock, which results of the run wait on too.
      if (!runRunning) await refreshRunState(store, deviceRun.testRunId, now, { unfinished: true, started: true });
      return assignment;
    });
    if (assignment !== undefined) assignments.push(assignment);
  }
  return assignments;
}

type RunInputsCache = Map<number, Promise<{ run: TestRun; secrets: RunSecrets | null; files: Map<number, UserFile> }>>;

async function runInputs(store: Store, keyRing: KeyRing, testRunId: number) {
  const run = (await store.testRuns.findById(testRunId))!;
  return {
    run,
    secrets: await runSecretsOf(store, keyRing, testRunId),
    files: await store.files.byIds(run.config.files.map((ref) => ref.id)),
  };
}

async function buildAssignment(
  store: Store,
  keyRing: KeyRing,
  deviceRun: DeviceRun,
  cache: RunInputsCache,
): Promise<Assignment> {
  if (!cache.has(deviceRun.testRunId)) cache.set(deviceRun.testRunId, runInputs(store, keyRing, deviceRun.testRunId));
  const { run, secrets, files } = await cache.get(deviceRun.testRunId)!;
  return assignmentOf(deviceRun, run.config, secrets, files);
}
