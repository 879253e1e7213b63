/**
 * Hostile tenants: on one device host (a real `serve --flavour public` and `agent` of virtual
 * devices), an attacker's packages try every way one tenant has been seen to hurt another (read
 * the agent's token, the server's database, other runs; poison the input cache; leave a daemon or
 * files behind; reach the host's services; take devices out of service with packages that crash,
 * cannot unpack or return oversized results), while an honest user runs on the same devices.
 * Every attempt must be refused, and the honest user's runs must finish with their own results.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { FakeAdbServer } from '../../test/support/fake-adb/index.ts';
import { duplicateEntryZip, manySmallBombsZip } from '../../test/support/zips.ts';
import { startCloud } from '../support/cloud.ts';
import { type ScenarioReport, keepLogs } from '../support/report.ts';
import { type Call, caller, newTraffic, patiently } from '../support/traffic.ts';
import { uploadFile } from '../support/uploads.ts';
import {
  DAEMON_MARK,
  TMP_MARK,
  attackPackage,
  crashingPackage,
  honestPackage,
  oversizeResultPackage,
} from './tenant-packages.ts';

export interface TenantOptions {
  readonly quick: boolean;
  readonly log: (line: string) => void;
}

const APP = new URL('../../examples/dist/sample-app.apk', import.meta.url);
const ANDROID_APPIUM_SERVER_SIDE = 4;
/** The phones of the second device host (the adb driver, against the fake ADB server). */
const PHONES = ['28141FDH2000JY', 'ZY2243TENANT'];
/** Three failures in a row used to take a device out of service. */
const CUSTOMER_FAULT_RUNS = 3;

interface Session {
  readonly id: number;
  readonly state: string;
  readonly device: { readonly displayName: string };
}
interface TestCase {
  readonly className: string;
  readonly methodName: string;
  readonly result: string;
  readonly errorMessage: string | null;
}

export async function tenantsScenario(options: TenantOptions): Promise<ScenarioReport> {
  const { log } = options;
  const traffic = newTraffic();
  const errors: string[] = [];
  const lost: string[] = [];
  const figures: Record<string, number | string> = {};
  const cloud = await startCloud({
    devices: 6,
    serverFlags: ['--flavour', 'public'],
    agentFlags: ['--flavour', 'public'],
  });
  const call = caller(traffic, cloud.url);
  const adb = await FakeAdbServer.start(PHONES.map((serial) => ({ serial })));
  fs.rmSync(TMP_MARK, { force: true });
  try {
    await cloud.startServer();
    await cloud.startAgent();
    await cloud.addAgent('adb-host', ['--driver', 'adb'], { ADB_SERVER_SOCKET: `tcp:127.0.0.1:${adb.port}` });
    const victim = await cloud.createUser('victim@tenants.example', 'GOLD');
    const attacker = await cloud.createUser('attacker@tenants.example', 'GOLD');
    const groups = (await call('GET', '/api/me/device-groups?withPublic=true&limit=0', { key: victim.apiKey })).body
      .data as Array<{ id: number; displayName: string }>;
    const android = groups.find((group) => group.displayName === 'All Android devices')!.id;
    const upload = async (key: string, name: string, bytes: Buffer) => {
      const answer = await uploadFile(call, key, name, bytes);
      if (answer.status !== 201 && answer.status !== 200)
        throw new Error(`upload of ${name}: ${answer.status} ${answer.text.slice(0, 200)}`);
      return answer.body.id as number;
    };
    const app = fs.readFileSync(APP);
    const victimFiles = {
      app: await upload(victim.apiKey, 'app.apk', app),
      tests: await upload(victim.apiKey, 'honest.zip', await honestPackage()),
    };
    const attackerApp = await upload(attacker.apiKey, 'app.apk', app);
    const secret = randomBytes(12).toString('hex');
    let attackerRuns = 0;
    const run = (key: string, tests: number, appId: number, parameters: Record<string, string> = {}) => {
      if (key === attacker.apiKey) attackerRuns += 1;
      return startAndFinish(call, key, {
        osType: 'ANDROID',
        frameworkId: ANDROID_APPIUM_SERVER_SIDE,
        projectName: 'tenants',
        deviceGroupId: android,
        files: [
          { id: appId, action: 'INSTALL' },
          { id: tests, action: 'RUN_TEST' },
        ],
        testRunParameters: Object.entries(parameters).map(([key, value]) => ({ key, value })),
      });
    };

    // Packages that cannot unpack never reach a device.
    for (const [name, bytes] of [
      ['duplicate run-tests.sh', await duplicateEntryZip()],
      ['1,000 entries of 1 MiB of zeros', manySmallBombsZip()],
    ] as const) {
      const answer = await uploadFile(call, attacker.apiKey, 'package.zip', bytes);
      if (answer.status !== 400)
        errors.push(`a package with ${name} was accepted at upload (${answer.status}), not refused with 400`);
    }

    const honest = async (when: string) => {
      for (const session of await run(victim.apiKey, victimFiles.tests, victimFiles.app, { SECRET: secret })) {
        const names = (await testCases(call, victim.apiKey, session.id)).map((testCase) => testCase.methodName);
        if (session.state !== 'SUCCEEDED' || names.join() !== 'paysWithCard') {
          lost.push(
            `the honest run ${when} on ${session.device.displayName} ended ${session.state} with test cases [${names.join(', ')}]`,
          );
        }
      }
    };
    log('the honest user runs, filling the input cache');
    await honest('before the attacks');

    // What the attacker aims at exists on this host, or "refused" would prove nothing.
    const cacheEntries = fs
      .readdirSync(cloud.dir, { recursive: true, encoding: 'utf8' })
      .filter((entry) => /(^|\/)cache\/[0-9a-f]{64}$/.test(entry));
    for (const [target, present] of [
      ['the server database', fs.existsSync(`${cloud.dir}/server/devicecloud.db`)],
      ['the blob store', fs.existsSync(`${cloud.dir}/server/blobs`)],
      ["the agents' cached inputs", cacheEntries.length > 0],
    ] as const) {
      if (!present) errors.push(`${target} is not where the attacker looks: its refusals there prove nothing`);
    }

    log('the attacker runs its attacks on every Android device');
    const attack = await upload(attacker.apiKey, 'attack.zip', await attackPackage());
    const port = new URL(cloud.url()).port;
    const attackSessions = await run(attacker.apiKey, attack, attackerApp, {
      TARGET: cloud.dir,
      SERVER_PORT: port,
      ADB_SERIALS: PHONES.join(' '),
    });
    let attempts = 0;
    for (const session of attackSessions) {
      const cases = await testCases(call, attacker.apiKey, session.id);
      if (cases.length === 0)
        errors.push(
          `the attack on ${session.device.displayName} reported nothing (${session.state}): the scenario proved nothing there`,
        );
      attempts += cases.length;
      for (const breach of cases.filter((testCase) => testCase.result === 'FAILED'))
        errors.push(`${breach.methodName} on ${session.device.displayName}: ${breach.errorMessage}`);
    }
    figures['attempts from inside'] = attempts;
    if (fs.existsSync(TMP_MARK)) errors.push(`tmp: the attacker wrote ${TMP_MARK} on the host`);
    const daemons = await survivors(DAEMON_MARK);
    if (daemons.length > 0)
      errors.push(`daemon: ${daemons.length} process(es) the attacker started outlived its run: ${daemons.join(', ')}`);

    log('the attacker runs packages that crash, and results that are too large');
    const crash = await upload(attacker.apiKey, 'crash.zip', await crashingPackage());
    for (let index = 0; index < CUSTOMER_FAULT_RUNS; index += 1) {
      for (const session of await run(attacker.apiKey, crash, attackerApp)) {
        if (session.state !== 'FAILED')
          errors.push(
            `a crashing package on ${session.device.displayName} ended ${session.state}, not FAILED (the customer's fault)`,
          );
      }
    }
    const oversize = await upload(attacker.apiKey, 'oversize.zip', await oversizeResultPackage());
    for (const session of await run(attacker.apiKey, oversize, attackerApp)) {
      const cases = await testCases(call, attacker.apiKey, session.id);
      if (cases.length !== 2)
        errors.push(
          `oversize results on ${session.device.displayName}: ${cases.length} test cases came back, not 2 (cut, never dropped)`,
        );
    }
    const devices = (await patiently(() => call('GET', '/api/v2/devices?limit=0'))).body.data as Array<{
      displayName: string;
      osType: string;
      lockReason: string | null;
    }>;
    for (const device of devices.filter((d) => d.osType === 'ANDROID' && d.lockReason === 'NOT_OPERATIONAL')) {
      errors.push(`device ${device.displayName} was taken out of service by one tenant's packages`);
    }

    log('the honest user runs again: its own package, its own results');
    await honest('after the attacks');
    figures['attacker runs'] = attackerRuns;
    figures['Android devices'] = attackSessions.length;
    const crashed = cloud.crashed();
    if (crashed !== undefined) errors.push(crashed);
    if (traffic.serverErrors.length > 0) errors.push(...traffic.serverErrors.slice(0, 5));
  } catch (error) {
    errors.push(`the scenario stopped: ${(error as Error).message}`);
  } finally {
    if (errors.length + lost.length > 0) keepLogs('tenants', cloud.output(), log);
    killSurvivors(DAEMON_MARK);
    fs.rmSync(TMP_MARK, { force: true });
    await cloud.stop();
    await adb.close();
  }
  return {
    name: 'hostile tenants (virtual and adb hosts, public flavour)',
    traffic,
    faults: 0,
    inputs: 0,
    lost,
    errors,
    figures,
    skipped: [],
  };
}

/** Starts a run and waits until it is FINISHED; resolves with its device sessions. */
async function startAndFinish(call: Call, key: string, config: unknown): Promise<Session[]> {
  const started = await call('POST', '/api/v2/runs', { key, json: config, label: 'start run' });
  if (started.status !== 201) throw new Error(`run start: ${started.status} ${started.text.slice(0, 300)}`);
  const id = started.body.id as number;
  const deadline = Date.now() + 180_000;
  for (;;) {
    const runNow = await call('GET', `/api/v2/runs/${id}`, { key, label: 'poll run' });
    if (runNow.body.state === 'FINISHED') break;
    if (Date.now() > deadline) throw new Error(`run ${id} did not finish in 180 s (${runNow.body.state})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return (await call('GET', `/api/v2/runs/${id}/device-sessions?limit=0`, { key })).body.data as Session[];
}

async function testCases(call: Call, key: string, sessionId: number): Promise<TestCase[]> {
  return (await call('GET', `/api/v2/device-sessions/${sessionId}/test-case-runs?limit=0`, { key })).body
    .data as TestCase[];
}

/** Processes on the host whose command line carries `mark`, once the agent has had a moment to end its runs' processes. */
async function survivors(mark: string): Promise<string[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const found = pgrep(mark);
    if (found.length === 0 || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function pgrep(mark: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', mark], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

function killSurvivors(mark: string): void {
  for (const pid of pgrep(mark)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
