/**
 * The server's periodic duties: agents that stopped heartbeating lose their devices (offline),
 * device runs whose lease ran out end as WARNING (retried automatically when the run allows), and
 * due hooks are delivered. Every server runs it; each step is safe to run concurrently.
 */
import { DEVICE_RUN_MACHINE } from '../domain/runs.ts';
import { type Wakeups, endDeviceRun, wake } from '../services/run-lifecycle.ts';
import { type HookDeps, deliverDueHooks } from './hooks.ts';

export interface ReaperOptions extends HookDeps {
  readonly intervalMs: number;
  /** An agent is lost after this long without a heartbeat. */
  readonly agentTtlMs: number;
}

export interface Reaper {
  /** One pass, for tests and for the timer. */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

export function startReaper(options: ReaperOptions): Reaper {
  const { ctx, log } = options;
  // Two chains, so that slow hook endpoints never hold up giving up on lost agents.
  let reaping: Promise<void> = Promise.resolve();
  let delivering: Promise<unknown> = Promise.resolve();

  async function reap(): Promise<void> {
    const now = ctx.clock();
    for (const agent of await ctx.store.agents.silentSince(now - options.agentTtlMs)) {
      await ctx.store.devices.setAgentOnline(agent.id, false, now);
      log(`agent ${agent.name} stopped heartbeating; its devices are offline`);
    }
    const wakeups: Wakeups = new Set();
    for (const deviceRunId of await ctx.store.queue.expiredLeases(now)) {
      await ctx.store.transaction(async (store) => {
        const deviceRun = await store.deviceRuns.findById(deviceRunId);
        if (deviceRun === undefined || !DEVICE_RUN_MACHINE.can(deviceRun.state, 'end')) return;
        await endDeviceRun(
          store,
          now,
          deviceRun,
          {
            state: 'WARNING',
            failReason: 'the device host stopped reporting (agent lost); the device run could not be completed',
            testCases: null,
          },
          wakeups,
        );
        await store.devices.recordInfraFailure(deviceRun.deviceId);
      });
      log(`device run ${deviceRunId}: lease expired, ended as WARNING`);
    }
    wake(ctx, wakeups);
  }

  const report = (error: unknown) => log(`reaper: ${(error as Error).message}`);
  let delivered = true;
  const timer = setInterval(() => {
    reaping = reaping.then(reap).catch(report);
    // A new delivery pass only once the previous one is over.
    if (delivered) {
      delivered = false;
      delivering = deliverDueHooks(options)
        .catch(report)
        .finally(() => (delivered = true));
    }
  }, options.intervalMs);
  timer.unref();

  return {
    async tick() {
      reaping = reaping.then(reap);
      await reaping;
      delivering = delivering.then(() => deliverDueHooks(options));
      await delivering;
    },
    async stop() {
      clearInterval(timer);
      await Promise.allSettled([reaping, delivering]);
    },
  };
}
