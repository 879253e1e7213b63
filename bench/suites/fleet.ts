/**
 * The fleet (issue 21): N real `devicecloud serve` processes on one PostgreSQL database, device
 * hosts simulated in a few child processes speaking the real agent protocol over HTTP (their
 * tests take no time), and CI clients polling their runs. Two phases: idle (every device free,
 * no work: what heartbeats and waiting claims cost per 1,000 devices), then dispatch (a queue of
 * device runs over every device: device runs per second, claim latency, CPU and statements per
 * device run). PostgreSQL is a private server of the benchmark's own with pg_stat_statements
 * when the machine allows it (the shared one at 5432 otherwise, without statement counts and with
 * other users' CPU in its figures).
 *
 * Sizes: quick 2 servers, 500 devices of 10 agents, 50 polling clients, 2,000 device runs; full
 * 3 servers, 2,000 devices of 40 agents, 100 clients, 8,000 device runs (what two shared cores
 * hold); BENCH_FLEET=servers,devices,agents,clients,deviceRuns for any other, e.g.
 * `BENCH_FLEET=3,10000,200,500,20000` for the issue's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startPrivatePostgres } from '../../chaos/support/postgres.ts';
import { createClient } from '../../src/client/api-client.ts';
import { formatSecretKey } from '../../src/domain/secret-keys.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { DEFAULT_LIMITS } from '../../src/services/context.ts';
import { fixedKeyRing, generateSecretKey } from '../../src/services/secret-box.ts';
import { directoryBlobStore } from '../../src/store/blobs.ts';
import { openDatabase } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations/index.ts';
import { memoryNotifier } from '../../src/store/notifier.ts';
import { createStore } from '../../src/store/store.ts';
import { type RunningProcess, startCli } from '../../test/support/cli.ts';
import { POSTGRES_URL, postgresReachable } from '../support/context.ts';
import type { AgentPlan, PollerPlan } from '../support/fleet-actors.ts';
import { type Actors, merged, startActors } from '../support/fleet-children.ts';
import {
  cpuBetween,
  cpuReading,
  logProfile,
  postmasterPid,
  resetStatements,
  statements,
} from '../support/fleet-measures.ts';
import { type Figure, type Suite, percentile } from '../support/report.ts';
import { seedUser } from '../support/seed.ts';

interface Size {
  readonly servers: number;
  readonly devices: number;
  readonly agents: number;
  readonly clients: number;
  readonly deviceRuns: number;
}

const QUICK: Size = { servers: 2, devices: 500, agents: 10, clients: 50, deviceRuns: 2000 };
const FULL: Size = { servers: 3, devices: 2000, agents: 40, clients: 100, deviceRuns: 8000 };
const HEARTBEAT_MS = 5000;
const DEVICES_PER_RUN = 100;
const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/dist');

function sizeOf(quick: boolean): Size {
  const text = process.env.BENCH_FLEET;
  if (text === undefined || text === '') return quick ? QUICK : FULL;
  const [servers, devices, agents, clients, deviceRuns] = text.split(',').map(Number);
  const size = { servers, devices, agents, clients, deviceRuns: deviceRuns ?? devices! * 2 } as Size;
  if (Object.values(size).some((value) => !Number.isInteger(value) || value < 1))
    throw new Error(`BENCH_FLEET=${text}: want servers,devices,agents,clients[,deviceRuns], positive integers`);
  return size;
}

export const fleet: Suite = async ({ quick, log }) => {
  if (!(await postgresReachable())) {
    log('fleet: PostgreSQL is not reachable: SKIPPED');
    return [];
  }
  const size = sizeOf(quick);
  log(
    `fleet: ${size.servers} servers, ${size.devices} devices over ${size.agents} agents, ${size.clients} polling clients, ${size.deviceRuns} device runs`,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-fleet-'));
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    // PostgreSQL: a private server with pg_stat_statements, or the shared one.
    const privatePostgres = await startPrivatePostgres([
      'shared_preload_libraries=pg_stat_statements',
      'pg_stat_statements.track_utility=on',
    ]);
    let adminUrl = POSTGRES_URL;
    if ('unavailable' in privatePostgres) log(`fleet: ${privatePostgres.unavailable}; on the shared PostgreSQL`);
    else {
      adminUrl = privatePostgres.url;
      cleanups.push(() => privatePostgres.destroy());
    }
    log(`fleet: PostgreSQL at ${adminUrl}`);
    const database = `dc_fleet_${process.pid}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    cleanups.push(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    });
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(adminUrl);
    url.pathname = `/${database}`;
    const databaseUrl = url.toString();
    const monitor = new pg.Client({ connectionString: databaseUrl });
    await monitor.connect();
    cleanups.push(() => monitor.end());
    await monitor.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').catch(() => undefined);
    const postgresPid = await postmasterPid(monitor);

    // The schema, agents and users, written directly: setting up is not what is measured.
    const key = generateSecretKey();
    const setup = await openDatabase({ databaseUrl, pgPoolSize: 2 });
    await migrate(setup);
    const ctx = {
      store: createStore(setup),
      clock: Date.now,
      blobs: directoryBlobStore(path.join(dir, 'setup-blobs')),
      notifier: memoryNotifier(),
      limits: DEFAULT_LIMITS,
      flavour: 'private' as const,
      keyRing: fixedKeyRing([key], 'the fleet bench'),
    };
    const tokens: string[] = [];
    for (let a = 0; a < size.agents; a++) tokens.push((await issueAgentToken(ctx, `fleet-host-${a}`)).token);
    const users = [
      await seedUser(ctx, 'fleet-silver', 'SILVER'),
      await seedUser(ctx, 'fleet-gold', 'GOLD'),
      await seedUser(ctx, 'fleet-platinum', 'PLATINUM'),
    ];
    await setup.close();
    log('fleet: schema, agent tokens and users written; starting the servers');

    // The servers, as an operator starts them.
    const env = { DEVICECLOUD_API_KEY_ENCRYPTION_KEYS: formatSecretKey(key) };
    const servers: RunningProcess[] = [];
    const serverUrls = await Promise.all(
      Array.from({ length: size.servers }, async (_, index) => {
        const server = startCli(
          [
            'serve',
            '--port',
            '0',
            '--log-level',
            'warn',
            '--heartbeat-ms',
            String(HEARTBEAT_MS),
            '--rate-limit-per-user',
            '0',
            '--rate-limit-per-ip',
            '0',
            '--database-url',
            databaseUrl,
            '--blob-dir',
            path.join(dir, 'blobs'),
            '--data-dir',
            path.join(dir, `server-${index}`),
          ],
          env,
        );
        servers.push(server);
        cleanups.push(() => server.stop());
        const [, base] = await server.waitFor(/running at (http:\/\/\S+)/);
        return base!;
      }),
    );
    log(`fleet: servers at ${serverUrls.join(', ')}`);
    const serverPids = servers.map((server) => server.child.pid!);

    // The agents, in a few processes; each agent talks to one server, in turn.
    const agentChildren: Actors[] = Array.from({ length: Math.min(3, size.agents) }, () => startActors());
    const pollerChild = startActors();
    for (const child of [...agentChildren, pollerChild]) cleanups.push(() => child.stop());
    const plans: AgentPlan[][] = agentChildren.map(() => []);
    for (let a = 0; a < size.agents; a++) {
      plans[a % agentChildren.length]!.push({
        token: tokens[a]!,
        server: serverUrls[a % serverUrls.length]!,
        name: `fleet-${a}`,
        devices: Math.floor(size.devices / size.agents) + (a < size.devices % size.agents ? 1 : 0),
      });
    }
    const registering = performance.now();
    const registered = agentChildren.map((child) => child.next('registered'));
    agentChildren.forEach((child, index) =>
      child.send({ type: 'agents', agents: plans[index]!, heartbeatMs: HEARTBEAT_MS, claimWaitMs: 25_000 }),
    );
    const devices = (await Promise.all(registered)).reduce((sum, message) => sum + message.devices, 0);
    log(
      `fleet: ${devices} devices registered and cleaned in ${((performance.now() - registering) / 1000).toFixed(1)} s`,
    );
    const actorPids = [...agentChildren, pollerChild].map((child) => child.pid);

    // Idle: every device free, nothing queued; heartbeats and long-polled claims only.
    // Longer than a claim's wait (25 s), so that every agent's idle claim comes back in the window.
    const idleMs = 30_000;
    await Promise.all(agentChildren.map((child) => child.report()));
    await resetStatements(monitor);
    const idleBefore = cpuReading(serverPids, postgresPid, actorPids);
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const idleAfter = cpuReading(serverPids, postgresPid, actorPids);
    const idleStatements = await statements(monitor, database);
    const idle = cpuBetween(idleBefore, idleAfter);
    const idleActors = merged(await Promise.all(agentChildren.map((child) => child.report())));
    logProfile(log, 'idle', idleStatements);

    // The queue: runs of DEVICES_PER_RUN devices from users on three plans, through the API.
    for (const child of agentChildren) child.send({ type: 'pause' });
    const packagePath = path.join(EXAMPLES, 'tests-green.zip');
    const clients = users.map((user, index) =>
      createClient({ url: serverUrls[index % serverUrls.length]!, apiKey: user.apiKey }),
    );
    const files = await Promise.all(
      clients.map(async (client) => [
        { id: (await client.upload(path.join(EXAMPLES, 'sample-app.apk'))).id, action: 'INSTALL' as const },
        { id: (await client.upload(packagePath)).id, action: 'RUN_TEST' as const },
      ]),
    );
    const deviceIds = (await clients[0]!.devices())
      .filter((device) => device.osType === 'ANDROID')
      .map((device) => device.id);
    const runIds: Array<{ runId: number; user: number }> = [];
    const queueing = performance.now();
    for (let queued = 0, r = 0; queued < size.deviceRuns; r++) {
      const offset = (r * DEVICES_PER_RUN) % deviceIds.length;
      const count = Math.min(DEVICES_PER_RUN, size.deviceRuns - queued, deviceIds.length - offset);
      const user = r % users.length;
      const run = await clients[user]!.startRun({
        osType: 'ANDROID',
        frameworkId: 4,
        projectName: `fleet ${user}`,
        deviceIds: deviceIds.slice(offset, offset + count),
        files: files[user]!,
      });
      runIds.push({ runId: run.id, user });
      queued += count;
    }
    log(`fleet: ${runIds.length} runs queued in ${((performance.now() - queueing) / 1000).toFixed(1)} s`);

    // CI clients poll their runs (every 5 s each), spread over the servers.
    const pollers: PollerPlan[] = Array.from({ length: size.clients }, (_, index) => {
      const { runId, user } = runIds[index % runIds.length]!;
      return { server: serverUrls[index % serverUrls.length]!, apiKey: users[user]!.apiKey, runId, everyMs: 5000 };
    });
    pollerChild.send({ type: 'pollers', pollers });

    // Dispatch: every agent claims for its free devices until the queue is empty.
    await Promise.all(agentChildren.map((child) => child.report()));
    await pollerChild.report();
    await resetStatements(monitor);
    const before = cpuReading(serverPids, postgresPid, actorPids);
    for (const child of agentChildren) child.send({ type: 'go' });
    const started = performance.now();
    let lastDone = 0;
    let lastMoved = performance.now();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const done = agentChildren.reduce((sum, child) => sum + child.done(), 0);
      if (done >= size.deviceRuns) break;
      if (done !== lastDone) {
        lastDone = done;
        lastMoved = performance.now();
      } else if (performance.now() - lastMoved > 60_000)
        throw new Error(`fleet: stuck at ${done} of ${size.deviceRuns} device runs for a minute`);
    }
    const seconds = (performance.now() - started) / 1000;
    const leasesLost = agentChildren.reduce((sum, child) => sum + child.lost(), 0);
    if (leasesLost > 0)
      log(
        `fleet: ${leasesLost} device runs lost their lease before their result: the machine is too slow for this size`,
      );
    const after = cpuReading(serverPids, postgresPid, actorPids);
    const busy = await statements(monitor, database);
    const dispatch = cpuBetween(before, after);
    const actors = merged(await Promise.all(agentChildren.map((child) => child.report())));
    const polls = merged([await pollerChild.report()]);
    logProfile(log, 'dispatch', busy);
    if (actors.errors.length > 0) log(`fleet: agent errors: ${actors.errors.slice(0, 5).join(' | ')}`);

    const perSecond = size.deviceRuns / seconds;
    const thousands = devices / 1000;
    const name = `${size.servers} servers, ${devices.toLocaleString('en-US')} devices / ${size.agents} agents`;
    const serverCores = dispatch.servers.map((cpu) => cpu / seconds);
    const postgresCores = dispatch.postgres / seconds;
    const actorCores = dispatch.actors / seconds;
    // Which resource ran out first: the busiest of the servers (one core each at most), PostgreSQL, or the machine.
    const machineShare = dispatch.machineCores / os.availableParallelism();
    const ceiling =
      machineShare > 0.9
        ? `the machine's ${os.availableParallelism()} cores (${(machineShare * 100).toFixed(0)}% busy: servers ${serverCores.map((c) => c.toFixed(2)).join('+')}, PostgreSQL ${postgresCores.toFixed(2)}, agents and clients ${actorCores.toFixed(2)} cores)`
        : Math.max(...serverCores) > 0.85
          ? 'a server process (one core)'
          : postgresCores > 0.85
            ? 'PostgreSQL'
            : 'none of the CPUs: latency (locks or round trips)';
    log(`fleet: ${size.deviceRuns} device runs in ${seconds.toFixed(1)} s; ceiling: ${ceiling}`);
    log(
      `fleet: machine busy ${idle.machineCores.toFixed(2)} cores while idle, ${dispatch.machineCores.toFixed(2)} during dispatch (load ${os.loadavg()[0]!.toFixed(1)})`,
    );

    const figures: Figure[] = [
      {
        suite: 'fleet',
        name: `${name}: dispatched`,
        value: perSecond,
        unit: 'runs/s',
        goal: '>= 1000',
        met: perSecond >= 1000,
      },
      { suite: 'fleet', name: `${name}: claim p50`, value: percentile(actors.claimMs, 50), unit: 'ms' },
      {
        suite: 'fleet',
        name: `${name}: claim p99`,
        value: percentile(actors.claimMs, 99),
        unit: 'ms',
        goal: '< 500',
        met: percentile(actors.claimMs, 99) < 500,
      },
      ...dispatch.servers.map((cpu, index) => ({
        suite: 'fleet',
        name: `${name}: server ${index + 1} CPU per 1,000 device runs`,
        value: (cpu / size.deviceRuns) * 1000,
        unit: 's',
      })),
      {
        suite: 'fleet',
        name: `${name}: PostgreSQL CPU per 1,000 device runs`,
        value: (dispatch.postgres / size.deviceRuns) * 1000,
        unit: 's',
      },
      { suite: 'fleet', name: `${name}: results after the lease ran out`, value: leasesLost, unit: '' },
      { suite: 'fleet', name: `${name}: machine busy during dispatch`, value: dispatch.machineCores, unit: 'cores' },
      ...(busy === undefined
        ? []
        : [
            {
              suite: 'fleet',
              name: `${name}: statements per device run`,
              value: busy.calls / size.deviceRuns,
              unit: '',
            },
          ]),
      ...idle.servers.map((cpu, index) => ({
        suite: 'fleet',
        name: `${name}: idle, server ${index + 1} CPU per 1,000 devices`,
        value: cpu / idle.seconds / thousands,
        unit: 'cores',
      })),
      {
        suite: 'fleet',
        name: `${name}: idle, all servers' CPU for 10,000 devices (extrapolated)`,
        value: (idle.servers.reduce((sum, cpu) => sum + cpu, 0) / idle.seconds / thousands) * 10,
        unit: 'cores',
        goal: '< 1',
        met: (idle.servers.reduce((sum, cpu) => sum + cpu, 0) / idle.seconds / thousands) * 10 < 1,
      },
      {
        suite: 'fleet',
        name: `${name}: idle, PostgreSQL CPU per 1,000 devices`,
        value: idle.postgres / idle.seconds / thousands,
        unit: 'cores',
      },
      ...(idleStatements === undefined
        ? []
        : [
            {
              suite: 'fleet',
              name: `${name}: idle, statements per second per 1,000 devices`,
              value: idleStatements.calls / idle.seconds / thousands,
              unit: '/s',
            },
          ]),
      { suite: 'fleet', name: `${name}: heartbeat p50`, value: percentile(idleActors.heartbeatMs, 50), unit: 'ms' },
      { suite: 'fleet', name: `${name}: heartbeat p99`, value: percentile(idleActors.heartbeatMs, 99), unit: 'ms' },
      {
        suite: 'fleet',
        name: `${name}: ${size.clients} CI clients' run status p99`,
        value: percentile(polls.pollMs, 99),
        unit: 'ms',
      },
    ];
    if (polls.pollErrors > 0) log(`fleet: ${polls.pollErrors} polls failed`);
    return figures;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: Error) => log(`fleet: ${error.message}`));
    fs.rmSync(dir, { recursive: true, force: true });
  }
};
