/**
 * The whole flow through real processes: a `devicecloud serve` and a `devicecloud agent` with six
 * virtual devices, users on three plans, the public API only. Covers priority order, results and
 * performance data, abort, timeout, retry, an agent killed mid-run and a server killed mid-run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screen } from '../../examples/build.ts';
import { zip } from '../support/zips.ts';
import { cliBudget } from '../support/cli.ts';
import { Cloud, type CloudUser, until } from '../support/cloud.ts';
import { processesWith } from '../support/sandbox.ts';

const SERVER_SIDE = 4;
const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/dist');

/**
 * One test package for every scenario, steered by run parameters: SLEEP seconds of work, FAIL=1
 * for a failing test, SLEEP_ONCE=<file> to sleep unless the test made that file (the agent shows
 * the scratch folder to the sandbox read-only), STARTED=<name> to leave a file of that name in the
 * device's storage once it runs. Its first test fails when a previous run left a trace on the device.
 */
const SCRIPT = `set -u
mkdir -p "$OUTPUT_DIR" "$SCREENSHOT_DIR"
[ -n "\${STARTED:-}" ] && touch "$DEVICE_STORAGE/$STARTED"
echo "started on $DEVICE_NAME"
cp shot.png "$SCREENSHOT_DIR/start.png"
trace=''
[ -e "$DEVICE_STORAGE/trace" ] && trace='<failure message="a previous run left a trace">trace</failure>'
echo "run $DEVICE_RUN_ID" > "$DEVICE_STORAGE/trace"
seconds=\${SLEEP:-0}
if [ -n "\${SLEEP_ONCE:-}" ] && [ -e "$SLEEP_ONCE" ]; then seconds=0; fi
end=$(( $(date +%s) + seconds ))
while [ $(date +%s) -lt $end ]; do x=0; for i in $(seq 1 2000); do x=$((x+i)); done; sleep 0.2; done
failure=''
[ "\${FAIL:-0}" = 1 ] && failure='<failure message="asked to fail">expected true</failure>'
cat > "$OUTPUT_DIR/junit.xml" <<XML
<testsuite name="e2e" tests="2"><testcase classname="e2e.Device" name="isClean">$trace</testcase><testcase classname="e2e.Work" name="work">$failure</testcase></testsuite>
XML
echo "done"
`;

describe('devicecloud through real processes (serve + agent, 6 virtual devices)', () => {
  const cloud = new Cloud(['--heartbeat-ms', '500', '--lease-ms', '4000']);
  let users: Record<'platinum' | 'gold' | 'silver', CloudUser>;
  let files: Record<string, Array<{ id: number; action: string }>>;
  let android: number[];
  let scratch: string;

  beforeAll(async () => {
    await cloud.startServer();
    scratch = path.join(cloud.dataDir, 'scratch');
    fs.mkdirSync(scratch);
    await cloud.startAgent('host-1', 6, ['--sandbox-read-only', scratch]);
    users = {
      silver: await cloud.user('silver@example.com', 'SILVER'),
      gold: await cloud.user('gold@example.com', 'GOLD'),
      platinum: await cloud.user('platinum@example.com', 'PLATINUM'),
    };
    const packagePath = path.join(scratch, 'e2e-tests.zip');
    fs.writeFileSync(
      packagePath,
      await zip([
        ['run-tests.sh', SCRIPT, 0o100755],
        ['shot.png', screen(54, 96, [200, 80, 40])],
      ]),
    );
    files = {};
    for (const [name, user] of Object.entries(users)) {
      const app = await user.upload(path.join(EXAMPLES, 'sample-app.apk'));
      const tests = await user.upload(packagePath);
      files[name] = [
        { id: app.id, action: 'INSTALL' },
        { id: tests.id, action: 'RUN_TEST' },
      ];
    }
    const devices = await users.gold.api('GET', '/v2/devices?filter=osType_eq_ANDROID&sort=id_a');
    android = devices.body.data.map((device: { id: number }) => device.id);
    expect(android).toHaveLength(4);
  }, cliBudget(6)); // serve, an agent token and the agent, three users
  afterAll(() => cloud.stop(), 60_000);

  type Who = keyof typeof users;
  async function start(
    who: Who,
    deviceId: number,
    parameters: Record<string, string> = {},
    extra: Record<string, unknown> = {},
  ) {
    const answer = await users[who].api('POST', '/v2/runs', {
      osType: 'ANDROID',
      frameworkId: SERVER_SIDE,
      projectName: `e2e ${who}`,
      deviceIds: [deviceId],
      files: files[who],
      testRunParameters: Object.entries(parameters).map(([key, value]) => ({ key, value })),
      ...extra,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body as { id: number; projectId: number };
  }
  const run = (who: Who, id: number) => users[who].api('GET', `/v2/runs/${id}`).then((answer) => answer.body);
  const sessions = (who: Who, id: number) =>
    users[who].api('GET', `/v2/runs/${id}/device-sessions`).then((answer) => answer.body.data as any[]);
  const finished = (who: Who, id: number, timeoutMs = 60_000) =>
    until(
      () => run(who, id),
      (body) => body.state === 'FINISHED',
      timeoutMs,
    );
  const running = (who: Who, id: number) =>
    until(
      () => sessions(who, id),
      (list) => list.some((session) => session.state === 'RUNNING'),
    );

  it('runs queued device runs in plan order (PLATINUM, GOLD, SILVER), cleaning the device between them', async () => {
    const device = android[0]!;
    const blocker = await start('silver', device, { SLEEP: '3' });
    await running('silver', blocker.id);
    const silver = await start('silver', device);
    const gold = await start('gold', device);
    const platinum = await start('platinum', device);
    const waiting = await run('silver', silver.id);
    expect(waiting).toMatchObject({ state: 'WAITING', queuePosition: 3 });
    expect(waiting.message).toMatch(/busy with another run, 2 device runs ahead/);

    const ends = await Promise.all([
      finished('silver', blocker.id),
      finished('silver', silver.id),
      finished('gold', gold.id),
      finished('platinum', platinum.id),
    ]);
    for (const end of ends)
      expect(end).toMatchObject({
        state: 'FINISHED',
        succeededDeviceCount: 1,
        successfulTestCaseCount: 2,
        frameworkName: 'Appium Android server side',
      });
    const startOf = async (who: Who, id: number) => (await sessions(who, id))[0].startTime as number;
    const order = [
      await startOf('platinum', platinum.id),
      await startOf('gold', gold.id),
      await startOf('silver', silver.id),
    ];
    expect([...order].sort((a, b) => a - b)).toEqual(order);

    // What the blocker left behind is readable: JUnit, log, screenshots, CPU and memory.
    const [session] = await sessions('silver', blocker.id);
    const base = `/me/projects/${blocker.projectId}/runs/${blocker.id}/device-sessions/${session.id}`;
    const cases = await users.silver.api('GET', `${base}/test-case-runs`);
    expect(cases.body.data.map((c: any) => [c.className, c.methodName, c.result])).toEqual([
      ['e2e.Device', 'isClean', 'PASSED'],
      ['e2e.Work', 'work', 'PASSED'],
    ]);
    expect(await users.silver.text(`${base}/logs`)).toMatch(/^started on .*\ndone\n$/);
    const performance = await users.silver.api('GET', `/v2/device-sessions/${session.id}/performance`);
    expect(performance.body.length).toBeGreaterThanOrEqual(2);
    expect(performance.body[0]).toMatchObject({
      memUsage: expect.any(Number),
      cpuUsage: expect.any(Number),
      packageName: 'com.devicecloud.sample',
    });
    const screenshots = await users.silver.api('GET', `${base}/screenshots`);
    expect(screenshots.body.data.map((shot: any) => shot.originalName ?? shot.name)).toContain('start.png');
    expect(
      await users.silver.text(
        `/me/projects/${blocker.projectId}/runs/${blocker.id}/device-runs/${session.id}/junit.xml`,
      ),
    ).toContain('name="isClean"');
    // Another user sees none of it.
    expect((await users.gold.api('GET', `/v2/runs/${blocker.id}`)).status).toBe(404);
  }, 120_000);

  /** Whether a run with STARTED=<name> runs (or ran) on some device of host-1. */
  const started = async (name: string) => {
    const devices = path.join(cloud.dataDir, 'host-1', 'agent', 'virtual', 'devices');
    return fs.readdirSync(devices).some((serial) => fs.existsSync(path.join(devices, serial, 'storage', name)));
  };

  it('aborts a running device run promptly, keeping its partial results, and frees the device', async () => {
    const device = android[1]!;
    const long = await start('gold', device, { SLEEP: '120', STARTED: 'aborted-run' });
    await until(() => started('aborted-run'), Boolean);
    const aborted = await users.gold.api('POST', `/v2/runs/${long.id}/abort`);
    expect(aborted.status).toBe(200);
    const end = await finished('gold', long.id, 20_000);
    expect(end).toMatchObject({ abortedDeviceCount: 1 });
    const [session] = await sessions('gold', long.id);
    expect(session.state).toBe('ABORTED');
    // The user sees ABORTED at once; what the tests produced until then follows from the agent.
    await until(
      () => users.gold.text(`/v2/device-sessions/${session.id}/logs`),
      (log) => log.startsWith('started on '),
      15_000,
    );
    const next = await start('gold', device);
    expect(await finished('gold', next.id)).toMatchObject({ succeededDeviceCount: 1, successfulTestCaseCount: 2 });
  }, 60_000);

  it('ends a device run past its timeout as TIMEOUT with what it produced so far', async () => {
    const late = await start('gold', android[2]!, { SLEEP: '60' }, { timeout: 2 });
    const end = await finished('gold', late.id, 30_000);
    expect(end).toMatchObject({ timeoutedDeviceCount: 1 });
    const [session] = await sessions('gold', late.id);
    expect(session.state).toBe('TIMEOUT');
    expect(await users.gold.text(`/v2/device-sessions/${session.id}/logs`)).toMatch(/^started on /);
    const screenshots = await users.gold.api('GET', `/v2/device-sessions/${session.id}/screenshots`);
    expect(screenshots.body.data).toHaveLength(1);
  }, 60_000);

  it('takes a device out of service when its cleaning fails; an operator has it cleaned again and it works', async () => {
    const operator = await cloud.user('ops@example.com', 'GOLD', 'ADMIN');
    const device = android[2]!;
    const state = () => operator.api('GET', `/admin/devices/${device}`).then((answer) => answer.body);
    const { serial } = await state();
    const hook = path.join(cloud.dataDir, 'host-1', 'agent', 'virtual', 'devices', serial, 'fail-cleaning');
    fs.writeFileSync(hook, '');
    await finished('gold', (await start('gold', device)).id);
    await until(state, (body) => body.state === 'NOT_OPERATIONAL', 20_000);
    fs.rmSync(hook);
    expect((await operator.api('POST', `/admin/devices/${device}/return-to-service`, {})).status).toBe(200);
    // The agent hears it on its next heartbeat, cleans the device, and it takes work again.
    await until(state, (body) => body.state === 'IDLE', 20_000);
    expect(await finished('gold', (await start('gold', device)).id)).toMatchObject({ succeededDeviceCount: 1 });
  }, 90_000);

  it('retries failed device sessions on request', async () => {
    const failing = await start('platinum', android[3]!, { FAIL: '1' });
    expect(await finished('platinum', failing.id)).toMatchObject({ failedDeviceCount: 1, failedTestCaseCount: 1 });
    const [original] = await sessions('platinum', failing.id);
    // A plain retry retries the whole run: its one device, as a new session that replaces the old one.
    const retried = await users.platinum.api('POST', `/v2/runs/${failing.id}/retry`);
    expect(retried.status).toBe(200);
    await finished('platinum', failing.id);
    const list = await sessions('platinum', failing.id);

    expect(list.map((session) => [session.retryState, session.state])).toEqual([['MANUAL', 'FAILED']]);
    const replaced = await users.platinum.api('GET', `/v2/device-sessions/${original!.id}`);
    expect([replaced.body.retryState, replaced.body.state]).toEqual(['NONE', 'FAILED']);
  }, 60_000);

  it('gives up on the device runs of a killed agent, retries them automatically, and a restarted agent runs them', async () => {
    const marker = path.join(scratch, 'slept-once');
    const tag = `orphan-${process.pid}-${Date.now()}`;
    const victim = await start(
      'gold',
      android[0]!,
      { SLEEP: '120', SLEEP_ONCE: marker, STARTED: tag },
      { maxAutoRetriesCount: 1 },
    );
    await running('gold', victim.id);
    await until(() => started(tag), Boolean);
    expect(processesWith(tag, 'environ')).not.toEqual([]);
    await cloud.killAgent('host-1');
    fs.writeFileSync(marker, '');

    // The lease runs out: the device run ends WARNING, and its automatic retry waits for the device.
    const [lost] = await sessions('gold', victim.id);
    const list = await until(
      () => sessions('gold', victim.id),
      (sessions) => sessions[0]?.retryState === 'AUTO',
      20_000,
    );
    // The retry replaces the lost session in the run's list; the lost one stays readable by id.
    expect(list.map((session) => [session.retryState, session.state])).toEqual([['AUTO', 'WAITING']]);
    const replaced = await users.gold.api('GET', `/v2/device-sessions/${lost!.id}`);
    expect([replaced.body.retryState, replaced.body.state]).toEqual(['NONE', 'WARNING']);
    const waiting = await run('gold', victim.id);
    expect(waiting.message).toMatch(/offline/);

    // The restarted agent stops what its predecessor left running, cleans, and runs the retry.
    await cloud.startAgent('host-1', 6, ['--sandbox-read-only', scratch]);
    const end = await finished('gold', victim.id, 30_000);
    expect(end).toMatchObject({ succeededDeviceCount: 1, warningDeviceCount: 0 });
    expect(processesWith(tag, 'environ')).toEqual([]);
  }, 90_000);

  it('loses nothing when the server is killed mid-run and started again', async () => {
    const survivor = await start('silver', android[1]!, { SLEEP: '4' });
    await running('silver', survivor.id);
    const before = cloud.agentOutput('host-1').length;
    await cloud.killServer();
    // The server comes back once the agent has found it gone (and is riding that out), not after a guessed second.
    await until(
      async () => cloud.agentOutput('host-1').slice(before),
      (since) => /failed \(.*\); retrying/.test(since),
      30_000,
    );
    await cloud.startServer();
    const end = await finished('silver', survivor.id, 60_000);
    expect(end).toMatchObject({ succeededDeviceCount: 1, successfulTestCaseCount: 2 });
    const [session] = await sessions('silver', survivor.id);
    expect(await users.silver.text(`/v2/device-sessions/${session.id}/logs`)).toMatch(/done\n$/);
  }, 90_000);
});
