/**
 * Scheduling: device runs queued over many devices whose tests take no time, dispatched through
 * the server side of the agent protocol (the claim, result and cleaned use cases, without HTTP),
 * on SQLite and PostgreSQL. Reports device runs dispatched per second, claim latency, and the
 * time from a device reported clean to its next device run handed out.
 */
import { PROTOCOL_VERSION } from '../../src/protocol/v1.ts';
import { reportCleaned, reportResult } from '../../src/services/agent-reports.ts';
import { claim, hello } from '../../src/services/agent-session.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { createProject } from '../../src/services/projects.ts';
import type { Agent } from '../../src/domain/agents.ts';
import * as fixtures from '../../test/support/fixtures.ts';
import { type Engine, openBenchContext, postgresReachable } from '../support/context.ts';
import { seedUser } from '../support/seed.ts';
import { type Figure, type Suite, percentile } from '../support/report.ts';

const AGENTS = 10;

async function schedule(engine: Engine, deviceCount: number, deviceRunCount: number) {
  const bench = await openBenchContext(engine);
  const { ctx } = bench;
  try {
    // Agents register their devices and report them clean, as real ones do.
    const agents: Array<{ agent: Agent; deviceIds: number[] }> = [];
    for (let a = 0; a < AGENTS; a++) {
      const { agent } = await issueAgentToken(ctx, `bench-host-${a}`);
      const devices = Array.from({ length: deviceCount / AGENTS }, (_, d) => ({
        serial: `bench-${a}-${d}`,
        displayName: `Bench ${a}-${d}`,
        manufacturer: 'Bench',
        osType: 'ANDROID' as const,
        platform: 'ANDROID',
        releaseVersion: '14',
        apiLevel: 34,
        executionKinds: ['server-side' as const],
      }));
      const answer = await hello(ctx, agent, {
        protocol: PROTOCOL_VERSION,
        agentVersion: 'bench',
        hostname: `bench-${a}`,
        devices,
      });
      for (const { deviceId } of answer.devices)
        await reportCleaned(ctx, agent, deviceId, { ok: true, report: 'clean' });
      agents.push({ agent, deviceIds: answer.devices.map((device) => device.deviceId) });
    }
    const devices = [...(await ctx.store.devices.byIds(agents.flatMap((entry) => entry.deviceIds))).values()];

    // The queue: runs over every device, from users on three plans.
    const users = [
      await seedUser(ctx, 'silver', 'SILVER'),
      await seedUser(ctx, 'gold', 'GOLD'),
      await seedUser(ctx, 'platinum', 'PLATINUM'),
    ];
    for (let queued = 0, r = 0; queued < deviceRunCount; r++) {
      const user = users[r % users.length]!;
      const size = Math.min(deviceCount, deviceRunCount - queued);
      await ctx.store.transaction(async (store) => {
        const scoped = { ...ctx, store };
        const { project } = await createProject(scoped, user, { name: `Queue ${r}` });
        await fixtures.run(
          scoped,
          user,
          project.id,
          devices.slice(0, size),
          Array.from({ length: size }, () => 'WAITING' as const),
        );
      });
      queued += size;
    }

    // Every agent claims for its free devices, "runs" what it gets (no time), reports, cleans.
    const claimMs: number[] = [];
    const freeToStartMs: number[] = [];
    let done = 0;
    const finished = new AbortController();
    const started = performance.now();
    await Promise.all(
      agents.map(async ({ agent, deviceIds }) => {
        let free = [...deviceIds];
        const freedAt = new Map<number, number>();
        while (done < deviceRunCount) {
          const before = performance.now();
          const answer = await claim(ctx, agent, { deviceIds: free, running: [], waitMs: 200 }, finished.signal);
          const after = performance.now();
          claimMs.push(after - before);
          const taken = new Set(answer.assignments.map((assignment) => assignment.deviceId));
          free = free.filter((id) => !taken.has(id));
          await Promise.all(
            answer.assignments.map(async (assignment) => {
              const freed = freedAt.get(assignment.deviceId);
              if (freed !== undefined) freeToStartMs.push(after - freed);
              await reportResult(ctx, agent, assignment.deviceRunId, {
                seq: 1,
                outcome: 'SUCCEEDED',
                failReason: null,
                testCases: [],
              });
              await reportCleaned(ctx, agent, assignment.deviceId, { ok: true, report: 'clean' });
              freedAt.set(assignment.deviceId, performance.now());
              free.push(assignment.deviceId);
              done += 1;
            }),
          );
        }
        finished.abort();
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    return {
      perSecond: deviceRunCount / seconds,
      seconds,
      claimP50: percentile(claimMs, 50),
      claimP99: percentile(claimMs, 99),
      freeP50: percentile(freeToStartMs, 50),
      freeP99: percentile(freeToStartMs, 99),
    };
  } finally {
    await bench.close();
  }
}

export const scheduling: Suite = async ({ quick, log }) => {
  const figures: Figure[] = [];
  const engines: Engine[] = (await postgresReachable()) ? ['sqlite', 'postgres'] : ['sqlite'];
  if (engines.length === 1) log('PostgreSQL is not reachable: its scheduling figures are SKIPPED');
  for (const engine of engines) {
    const devices = 500;
    const deviceRuns =
      Number(process.env.BENCH_DEVICE_RUNS ?? 0) || (quick ? (engine === 'sqlite' ? 5000 : 2000) : 10_000);
    const result = await schedule(engine, devices, deviceRuns);
    log(`${engine}: ${deviceRuns} device runs over ${devices} devices in ${result.seconds.toFixed(1)} s`);
    const name = `${engine}, ${deviceRuns.toLocaleString('en-US')} device runs / ${devices} devices`;
    figures.push(
      {
        suite: 'scheduling',
        name: `${name}: dispatched`,
        value: result.perSecond,
        unit: 'runs/s',
        ...(engine === 'sqlite' && { goal: '>= 1000', met: result.perSecond >= 1000 }),
      },
      { suite: 'scheduling', name: `${name}: claim p50`, value: result.claimP50, unit: 'ms' },
      { suite: 'scheduling', name: `${name}: claim p99`, value: result.claimP99, unit: 'ms' },
      { suite: 'scheduling', name: `${name}: free to next start p50`, value: result.freeP50, unit: 'ms' },
      { suite: 'scheduling', name: `${name}: free to next start p99`, value: result.freeP99, unit: 'ms' },
    );
  }
  return figures;
};
