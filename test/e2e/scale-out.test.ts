/**
 * The scale-out rehearsal on one machine: two `devicecloud serve` processes on one PostgreSQL
 * database with a shared blob directory, two `devicecloud agent` processes of ten virtual
 * devices each (each told both servers), about 500 device runs from users on three plans. Half-way
 * through, one server and one agent are killed with SIGKILL; the agent's host restarts it. Then:
 * every device run reached a final state, ran at most once (its retry once more), no device ran
 * two at once, and each device took its original device runs by plan, then age.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevicecloudClient, createClient } from '../../src/client/api-client.ts';
import type { ApiDeviceSession, ApiTestRun } from '../../src/client/api-types.ts';
import { formatSecretKey } from '../../src/domain/secret-keys.ts';
import { generateSecretKey } from '../../src/services/secret-box.ts';
import { type RunningProcess, cliBudget, runCli, startCli } from '../support/cli.ts';
import { ENGINES, POSTGRES_URL } from '../support/engines.ts';
import { until } from '../support/cloud.ts';
import { zip } from '../support/zips.ts';

const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/dist');
const PLANS = ['SILVER', 'GOLD', 'PLATINUM'] as const;
const PRIORITY = { SILVER: 1, GOLD: 2, PLATINUM: 3 };
const RUNS = 36; // of 14 Android devices each: 504 device runs

/** Writes a start and an end line to the ledger, so that the test can see what ran where and when. */
const SCRIPT = `set -eu
echo "start $DEVICE_RUN_ID $DEVICE_SERIAL $(date +%s%N)" >> "$LEDGER"
sleep 0.05
mkdir -p "$OUTPUT_DIR"
echo '<testsuite name="s" tests="1"><testcase classname="scale.Out" name="once"/></testsuite>' > "$OUTPUT_DIR/junit.xml"
echo "end $DEVICE_RUN_ID $DEVICE_SERIAL $(date +%s%N)" >> "$LEDGER"
`;

describe.runIf(ENGINES.includes('postgres'))('two servers and two agents on one PostgreSQL', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-scale-'));
  const ledger = path.join(dir, 'ledger.txt');
  const name = `dc_scale_${process.pid}_${Date.now()}`;
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  const processes = new Map<string, RunningProcess>();
  const serverUrls: string[] = [];
  const users: Array<{
    plan: (typeof PLANS)[number];
    apiKey: string;
    client: DevicecloudClient;
    files: Array<{ id: number; action: 'INSTALL' | 'RUN_TEST' }>;
  }> = [];
  const common = ['--database-url', databaseUrl, '--blob-dir', path.join(dir, 'blobs')];
  // Every server (and the operator's commands) of one cloud shares the keys that seal API keys (docs/deploy.md).
  const secrets = { DEVICECLOUD_API_KEY_ENCRYPTION_KEYS: formatSecretKey(generateSecretKey()) };

  const cli = async (args: string[]) => {
    const answer = await runCli(
      [...args, '--json', '--database-url', databaseUrl, '--data-dir', path.join(dir, 'admin')],
      secrets,
    );
    if (answer.code !== 0) throw new Error(`${args.join(' ')}: ${answer.stderr}`);
    return JSON.parse(answer.stdout);
  };
  const startServer = async (id: string) => {
    const server = startCli(
      [
        'serve',
        '--port',
        '0',
        '--log-level',
        'warn',
        '--heartbeat-ms',
        '500',
        '--lease-ms',
        '15000',
        '--data-dir',
        path.join(dir, id),
        ...common,
      ],
      secrets,
    );
    processes.set(id, server);
    const [, base] = await server.waitFor(/running at (http:\/\/\S+)/);
    return base!;
  };
  const tokens = new Map<string, string>();
  const startAgent = async (id: string, servers: string[]) => {
    // The script writes a ledger on the host, which the sandbox forbids: these agents run unsandboxed
    // (private flavour, chosen knowingly); test/e2e/sandbox.test.ts covers the sandbox.
    const agent = startCli(
      [
        'agent',
        '--server',
        servers.join(','),
        '--devices',
        '10',
        '--serial-prefix',
        id,
        '--data-dir',
        path.join(dir, id),
        '--sandbox',
        'none',
      ],
      { DEVICECLOUD_AGENT_TOKEN: tokens.get(id)! },
    );
    processes.set(id, agent);
    await agent.waitFor(/registered 10 device/);
  };
  const kill = async (id: string) => {
    const child = processes.get(id)!.child;
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null)
      await new Promise((resolve) => child.once('exit', resolve));
  };
  const ledgerLines = () =>
    fs.existsSync(ledger) ? fs.readFileSync(ledger, 'utf8').trim().split('\n').filter(Boolean) : [];

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    serverUrls.push(await startServer('server-1'), await startServer('server-2'));
    for (const id of ['host-a', 'host-b'])
      tokens.set(id, (await cli(['admin', 'create-agent-token', '--name', id])).token);
    const packagePath = path.join(dir, 'tests.zip');
    fs.writeFileSync(packagePath, await zip([['run-tests.sh', SCRIPT, 0o100755]]));
    for (const [index, plan] of [...PLANS, ...PLANS].entries()) {
      const user = await cli([
        'admin',
        'create-user',
        '--email',
        `${plan.toLowerCase()}${index}@example.com`,
        '--password',
        'scale-out-1',
        '--plan',
        plan,
      ]);
      const client = createClient({ url: serverUrls[index % 2]!, apiKey: user.apiKey });
      const app = await client.upload(path.join(EXAMPLES, 'sample-app.apk'));
      const tests = await client.upload(packagePath);
      users.push({
        plan,
        apiKey: user.apiKey,
        client,
        files: [
          { id: app.id, action: 'INSTALL' },
          { id: tests.id, action: 'RUN_TEST' },
        ],
      });
    }
  }, cliBudget(10)); // two servers, two agent tokens, six users

  afterAll(async () => {
    for (const process of processes.values()) await process.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it(
    'runs every device run once, in plan-then-age order per device, through a server and an agent killed half-way',
    async () => {
      // Register the devices, then stop the agents so that the whole queue is in place before work starts.
      // Both agents talk to server-1 first: when it dies, host-b's device runs in flight must finish through server-2.
      const both = [serverUrls[0]!, serverUrls[1]!];
      await startAgent('host-a', both);
      await startAgent('host-b', both);
      const devices = (await users[0]!.client.devices()).filter((device) => device.osType === 'ANDROID');
      expect(devices).toHaveLength(14);
      for (const id of ['host-a', 'host-b']) await processes.get(id)!.stop();

      const runs: Array<{ id: number; user: (typeof users)[number] }> = [];
      for (let i = 0; i < RUNS; i++) {
        const user = users[i % users.length]!;
        const run = await user.client.startRun({
          osType: 'ANDROID',
          frameworkId: 4,
          projectName: 'scale',
          deviceIds: devices.map((device) => device.id),
          files: user.files,
          testRunParameters: [{ key: 'LEDGER', value: ledger }],
          maxAutoRetriesCount: 1,
          // No video: the agent would start an ffmpeg (libx264) for each of the 504 device runs, most
          // of this file's CPU, for recordings nothing here looks at (videos.test.ts and the
          // dashboard's video test cover recording).
          videoRecordingEnabled: false,
        });
        runs.push({ id: run.id, user });
      }

      await startAgent('host-a', both);
      await startAgent('host-b', both);
      await until(
        async () => ledgerLines().length,
        (lines) => lines >= RUNS * 14,
        120_000,
      );
      // Half-way: one server and one agent die without warning; the host restarts its agent.
      await kill('server-1');
      await kill('host-a');
      await startAgent('host-a', both);

      // From here on, everyone talks to the living server.
      const living = users.map((user) => ({
        ...user,
        client: createClient({ url: serverUrls[1]!, apiKey: user.apiKey }),
      }));
      // A run waiting behind others does not change while they run: the ledger growing is progress too.
      // One run polled at a time: polling all 36 at once asked the server some 180 times a second for
      // minutes, CPU the test spent on asking rather than on the runs (docs/benchmarks.md, "The suite's
      // CPU, fourth round"). A run already finished answers on its first poll.
      const finalRuns: ApiTestRun[] = [];
      for (const { id, user } of runs)
        finalRuns.push(
          await until(
            () => living[users.indexOf(user)]!.client.run(id),
            (run) => run.state === 'FINISHED',
            120_000,
            () => ledgerLines().length,
          ),
        );
      expect(finalRuns.every((run) => run.deviceCount === 14)).toBe(true);

      // What each device session is: its run's plan and age, and whether it is an automatic retry.
      const sessions = new Map<number, { priority: number; createTime: number; retry: string; state: string }>();
      for (const [index, { id, user }] of runs.entries()) {
        const list = await living[users.indexOf(user)]!.client.deviceSessions(id);
        for (const session of list)
          sessions.set(session.id, {
            priority: PRIORITY[user.plan],
            createTime: finalRuns[index]!.createTime,
            retry: session.retryState,
            state: session.state,
          });
      }
      // A session a retry replaced leaves its run's list: the ledger names those that ran, read by their ids.
      for (const line of ledgerLines()) {
        const [kind, id] = line.split(' ');
        if (kind !== 'start' || sessions.has(Number(id))) continue;
        let replaced: { user: (typeof users)[number]; session: ApiDeviceSession } | undefined;
        for (const one of living) {
          const session = await one.client.deviceSession(Number(id)).catch(() => undefined);
          if (session !== undefined) replaced = { user: users[living.indexOf(one)]!, session };
        }
        expect(replaced, `device session ${id} ran but cannot be read by its id`).toBeDefined();
        const index = runs.findIndex((run) => run.id === replaced!.session.testRunId);
        sessions.set(Number(id), {
          priority: PRIORITY[replaced!.user.plan],
          createTime: finalRuns[index]!.createTime,
          retry: replaced!.session.retryState,
          state: replaced!.session.state,
        });
      }
      const current = [...sessions.values()].filter(
        (session) => session.state !== 'WARNING' || session.retry !== 'NONE',
      );
      expect(
        current.every((session) => session.state === 'SUCCEEDED'),
        JSON.stringify(current.filter((session) => session.state !== 'SUCCEEDED')).slice(0, 500),
      ).toBe(true);
      const lost = [...sessions.values()].filter((session) => session.state === 'WARNING');
      expect(lost.length).toBeLessThanOrEqual(7); // at most what host-a was running when it died
      expect(sessions.size).toBe(RUNS * 14 + lost.length);
      // It did lose its server: a refused or reset connection (node:http's words), then a retry.
      expect(processes.get('host-b')!.output()).toMatch(
        / failed \([^)]*(ECONNREFUSED|ECONNRESET|socket hang up|closed before)[^)]*\); retrying in \d+ ms/,
      );
      console.info(
        `scale-out: ${sessions.size} device sessions, ${lost.length} lost with host-a and retried, ${ledgerLines().length / 2} executions`,
      );

      // Exactly once: every device run started at most once; each that succeeded, exactly once and to the end.
      const starts = new Map<number, { serial: string; at: number }>();
      const ends = new Map<number, number>();
      for (const line of ledgerLines()) {
        const [kind, id, serial, at] = line.split(' ');
        if (kind === 'start') {
          expect(starts.has(Number(id)), `device run ${id} started twice`).toBe(false);
          starts.set(Number(id), { serial: serial!, at: Number(BigInt(at!) / 1000n) });
        } else ends.set(Number(id), Number(BigInt(at!) / 1000n));
      }
      for (const [id, session] of sessions)
        if (session.state === 'SUCCEEDED') expect(starts.has(id) && ends.has(id), `device run ${id}`).toBe(true);

      // Per device: never two at once, and the original device runs in plan-then-age order.
      const bySerial = new Map<string, number[]>();
      for (const [id, { serial }] of starts) bySerial.set(serial, [...(bySerial.get(serial) ?? []), id]);
      expect(bySerial.size).toBe(14);
      for (const [serial, ids] of bySerial) {
        ids.sort((a, b) => starts.get(a)!.at - starts.get(b)!.at);
        for (let i = 1; i < ids.length; i++) {
          const previousEnd = ends.get(ids[i - 1]!);
          if (previousEnd !== undefined)
            expect(
              starts.get(ids[i]!)!.at,
              `${serial}: ${ids[i]} started before ${ids[i - 1]} ended`,
            ).toBeGreaterThanOrEqual(previousEnd);
        }
        const originals = ids.filter((id) => sessions.get(id)!.retry === 'NONE').map((id) => sessions.get(id)!);
        const expected = [...originals].sort((a, b) => b.priority - a.priority || a.createTime - b.createTime);
        expect(
          originals.map((s) => [s.priority, s.createTime]),
          serial,
        ).toEqual(expected.map((s) => [s.priority, s.createTime]));
      }
      // A backstop only: every wait above gives up when nothing moves, and a loaded machine may take
      // many minutes for the 504 device runs and the six processes started here.
    },
    20 * 60_000,
  );
});
