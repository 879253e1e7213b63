/**
 * One user's package must not hurt the device or another user (issue 15, items 3 and 4), played
 * for real: a server, an agent with a virtual device, and packages that fail to unpack, crash
 * their script, write an oversized JUnit, or are poisoned in the agent's cache.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningAgent, startAgent } from '../../src/agent/agent.ts';
import { createVirtualDriver, defaultVirtualDevices } from '../../src/agent/drivers/virtual/index.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { until } from '../support/cloud.ts';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, upload } from '../support/harness.ts';
import { duplicateEntryZip, zip } from '../support/zips.ts';
import { testSandbox } from '../support/sandbox.ts';

const SERVER_SIDE = 7;

const junit = (name: string) =>
  `echo '<testsuite name="s"><testcase classname="c" name="${name}"/></testsuite>' > "$OUTPUT_DIR/junit.xml"\n`;

const CRASHING = 'rm -rf "$OUTPUT_DIR"\nkill -SEGV $$\n';

const OVERSIZED_JUNIT = `name=$(head -c 5000 /dev/zero | tr '\\0' n)
message=$(head -c 200000 /dev/zero | tr '\\0' m)
{
  printf '<testsuite name="s"><testcase classname="Big" name="%s"><failure message="%s">' "$name" "$message"
  head -c 2000000 /dev/zero | tr '\\0' s
  printf '</failure></testcase><testcase classname="Small" name="ok"/></testsuite>'
} > "$OUTPUT_DIR/junit.xml"
`;

describe.each(ENGINES)('hostile packages on a device host (%s)', (engine) => {
  let h: Harness;
  let agent: RunningAgent;
  let dataDir: string;
  let alice: TestUser;
  let device: number;
  let app: { id: number };
  const log: string[] = [];

  beforeEach(async () => {
    h = await createHarness(engine, { limits: { heartbeatMs: 200, claimWaitMs: 200 } });
    // The agent's clock is real; the harness clock would make its heartbeats look ancient.
    h.setTime(Date.now());
    const url = await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { token } = await issueAgentToken(h.ctx, 'host-1');
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-hostile-'));
    const driver = createVirtualDriver({
      dataDir: path.join(dataDir, 'virtual'),
      devices: defaultVirtualDevices(1, 0),
      sandbox: testSandbox(dataDir),
    });
    agent = startAgent({ serverUrls: [url], token, driver, dataDir, log: (line) => log.push(line) });
    await agent.ready;
    alice = await h.user({ plan: 'GOLD' });
    await until(
      () => deviceRow(),
      (row) => row?.state === 'IDLE',
      20_000,
    );
    device = (await deviceRow())!.id;
    app = await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example' },
    });
  });
  afterEach(async () => {
    await agent.stop();
    // The agent's keep-alive connections would hold the close for the server's keep-alive timeout.
    h.app.server.closeAllConnections();
    await h.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const deviceRow = () =>
    h.database.db
      .selectFrom('devices')
      .select(['id', 'state', 'state_reason', 'infra_failure_streak'])
      .executeTakeFirst();

  async function uploadPackage(name: string, bytes: Buffer): Promise<{ id: number; sha256: string }> {
    const answer = await upload(h.app, alice.key, '/api/me/files', name, bytes);
    expect(answer.status, answer.text).toBe(201);
    return {
      id: answer.body.id,
      sha256: (
        await h.database.db
          .selectFrom('files')
          .select('sha256')
          .where('id', '=', answer.body.id)
          .executeTakeFirstOrThrow()
      ).sha256,
    };
  }

  /** Runs the package on the device; answers its one device run once the device is clean again. */
  async function runOnDevice(tests: { id: number }, parameters: Array<{ key: string; value: string }> = []) {
    const started = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: {
        frameworkId: SERVER_SIDE,
        projectName: 'P',
        deviceIds: [device],
        files: [
          { id: app.id, action: 'INSTALL' },
          { id: tests.id, action: 'RUN_TEST' },
        ],
        testRunParameters: parameters,
      },
    });
    expect(started.status, started.text).toBe(201);
    const run = await until(
      async () => (await alice.call('GET', `/api/v2/runs/${started.body.id}`, { json: true })).body,
      (body) => body.state === 'FINISHED',
      30_000,
    );
    await until(
      () => deviceRow(),
      (row) => row?.state !== 'TESTING' && row?.state !== 'CLEANING',
      20_000,
    );
    const [session] = (await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true })).body.data;
    const failReason = (
      await h.database.db
        .selectFrom('device_runs')
        .select('fail_reason')
        .where('id', '=', session.id)
        .executeTakeFirstOrThrow()
    ).fail_reason;
    const cases = (
      await alice.call(
        'GET',
        `/api/me/projects/${run.projectId}/runs/${run.id}/device-sessions/${session.id}/test-case-runs`,
        { json: true },
      )
    ).body.data;
    return {
      state: session.state as string,
      failReason,
      cases: cases as Array<{ className: string; methodName: string; result: string }>,
    };
  }

  it('ends three runs of each customer fault FAILED with the reason, and never takes the device out of service', async () => {
    // Refused at upload; stored by hand here, as a server with other limits (or an older one) would have.
    expect((await upload(h.app, alice.key, '/api/me/files', 'dup.zip', await duplicateEntryZip())).status).toBe(400);
    const unpackable = await fixtures.file(h.ctx, alice.user, {
      name: 'dup.zip',
      inputType: 'TEST',
      properties: { entry_script: 'run-tests.sh' },
      bytes: await duplicateEntryZip(),
    });
    const crashing = await uploadPackage('crash.zip', await zip([['run-tests.sh', CRASHING, 0o100755]]));
    const oversized = await uploadPackage('big.zip', await zip([['run-tests.sh', OVERSIZED_JUNIT, 0o100755]]));

    for (let round = 0; round < 3; round++) {
      const broken = await runOnDevice(unpackable);
      expect(broken).toMatchObject({
        state: 'FAILED',
        failReason: expect.stringContaining('the test package could not be unpacked'),
      });
      expect(broken.failReason).toContain('run-tests.sh more than once');
      expect(await deviceRow()).toMatchObject({ state: 'IDLE', infra_failure_streak: 0 });
    }
    for (let round = 0; round < 3; round++) {
      const crashed = await runOnDevice(crashing);
      expect(crashed).toMatchObject({ state: 'FAILED', failReason: expect.stringContaining('reported no results') });
      expect(await deviceRow()).toMatchObject({ state: 'IDLE', infra_failure_streak: 0 });
    }
    for (let round = 0; round < 3; round++) {
      const cut = await runOnDevice(oversized);
      expect(cut.state).toBe('FAILED');
      expect(cut.failReason).toContain('results shortened');
      expect(cut.cases.map((c) => [c.className, c.result])).toEqual([
        ['Big', 'FAILED'],
        ['Small', 'PASSED'],
      ]);
      expect(cut.cases[0]!.methodName).toMatch(/^n+… \[cut: \d+ more characters\]$/);
      expect(await deviceRow()).toMatchObject({ state: 'IDLE', infra_failure_streak: 0 });
    }
  }, 240_000);

  it("detects a package poisoned in the agent's cache between two runs, and runs the honest one", async () => {
    const honest = await uploadPackage('tests.zip', await zip([['run-tests.sh', junit('honest'), 0o100755]]));
    expect((await runOnDevice(honest)).cases.map((c) => c.methodName)).toEqual(['honest']);
    const cached = path.join(dataDir, 'cache', honest.sha256);
    expect(fs.existsSync(cached)).toBe(true);

    // The attacker's package takes the honest one's place in the cache.
    const evil = `cp "$0" /dev/null; echo "$SECRET" > "$OUTPUT_DIR/stolen.txt"\n${junit('pwned')}`;
    fs.writeFileSync(cached, await zip([['run-tests.sh', evil, 0o100755]]));
    const second = await runOnDevice(honest, [{ key: 'SECRET', value: 's3cret' }]);
    expect(second).toMatchObject({ state: 'SUCCEEDED' });
    expect(second.cases.map((c) => c.methodName)).toEqual(['honest']);
    const outputs = await h.database.db.selectFrom('files').select('name').where('direction', '=', 'OUTPUT').execute();
    expect(outputs.map((file) => file.name)).not.toContain('stolen.txt');
    expect(log.join('\n')).toContain('no longer matches its checksum');
  }, 120_000);
});
