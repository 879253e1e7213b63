/** The agent protocol as a whole: devices registering, and one run from queue to results. */
import { XMLParser } from 'fast-xml-parser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  SERVER_SIDE,
  protocolWorld,
  publicAndroidGroup as publicAndroidGroupOf,
  startRun,
} from '../support/agent-protocol.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, testCase } from '../support/fake-agent.ts';
import { type Harness, type TestUser, call } from '../support/harness.ts';

describe.each(ENGINES)('running on devices through the agent protocol (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let app: { id: number };
  let tests: { id: number };

  beforeEach(async () => {
    ({ h, alice, agent, app, tests } = await protocolWorld(engine));
  });
  afterEach(async () => h.close());

  const publicAndroidGroup = () => publicAndroidGroupOf(alice);
  const start = (body: Record<string, unknown>) => startRun(alice, body);

  it('registers devices, shows them to everyone, and puts them in public groups', async () => {
    const devices = await call(h.app, 'GET', '/api/v2/devices?sort=displayName_a', { json: true });
    expect(
      devices.body.data.map((d: { displayName: string; online: boolean; locked: boolean }) => [
        d.displayName,
        d.online,
        d.locked,
      ]),
    ).toEqual([
      ['Galaxy S24', true, false],
      ['iPhone 15', true, false],
      ['Pixel 8', true, false],
    ]);
    // Reported nulls stay null (an iOS device has no API level), not coerced to 0.
    const iphone = devices.body.data.find((d: { displayName: string }) => d.displayName === 'iPhone 15');
    expect(iphone.softwareVersion).toMatchObject({ releaseVersion: '17.4', apiLevel: null });
    const groups = await alice.call('GET', '/api/me/device-groups?withPublic=true', { json: true });
    expect(
      groups.body.data.map((g: { displayName: string; deviceCount: number }) => [g.displayName, g.deviceCount]).sort(),
    ).toEqual([
      ['All Android devices', 2],
      ['All iOS devices', 1],
    ]);
  });

  it('runs a test run from start to finish: queue, claim, steps, samples, artifacts, results', async () => {
    const run = await start({
      osType: 'ANDROID',
      frameworkId: SERVER_SIDE,
      projectName: 'Shop',
      deviceGroupId: await publicAndroidGroup(),
      files: [
        { id: app.id, action: 'INSTALL' },
        { id: tests.id, action: 'RUN_TEST' },
      ],
      testRunParameters: [{ key: 'ENV', value: 'staging' }],
      timeout: 120,
    });
    expect(run).toMatchObject({
      state: 'WAITING',
      deviceCount: 2,
      waitingDeviceCount: 2,
      projectName: 'Shop',
      queuePosition: 1,
    });
    expect(run.message).toMatch(/^Waiting for 2 devices \(.*starting shortly/);

    const { assignments } = await agent.claim(['a1', 'a2']);
    expect(assignments).toHaveLength(2);
    const [first, second] = assignments;
    expect(first).toMatchObject({ kind: 'server-side', timeoutSeconds: 120, parameters: { ENV: 'staging' } });
    expect(first!.files.map((f) => f.action).sort()).toEqual(['INSTALL', 'RUN_TEST']);

    const download = await call(h.app, 'GET', first!.files.find((f) => f.action === 'INSTALL')!.url, {
      headers: { authorization: `Bearer ${agent.token}` },
    });
    expect(download.status).toBe(200);
    expect(download.text).toBe('contents of app.apk');
    const running = await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true });
    expect(running.body).toMatchObject({ state: 'RUNNING', runningDeviceCount: 2, message: null });

    const now = Date.now();
    const progress = {
      seq: 1,
      steps: [
        { type: 'INSTALL', time: now },
        { type: 'RUNNING', time: now + 10 },
      ],
      samples: [
        { timestamp: now + 20, cpuUsage: 0.25, memUsage: 51200, packageName: 'com.example' },
        { timestamp: now + 21, cpuUsage: 0.5, memUsage: null, packageName: null },
      ],
    };
    h.queries.length = 0;
    expect((await agent.post(`/device-runs/${first!.deviceRunId}/progress`, progress)).status).toBe(200);
    // A report's steps go in together: the open step closed, the new ones inserted in one statement.
    expect(h.queries.filter((statement) => /"device_run_steps"/.test(statement))).toHaveLength(2);
    expect((await agent.post(`/device-runs/${first!.deviceRunId}/progress`, progress)).status).toBe(200); // retried: applied once

    const artifact = (name: string, kind: string, body: string) =>
      call(h.app, 'PUT', `/agent/v1/device-runs/${first!.deviceRunId}/artifacts?name=${name}&kind=${kind}`, {
        body,
        headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/octet-stream' },
      });
    expect((await artifact('shot1.png', 'screenshot', 'PNGDATA')).status).toBe(201);
    expect((await artifact('test.log', 'log', 'line one\nline two\n')).status).toBe(201);
    expect((await artifact('test.log', 'log', 'line one\nline two\nline three\n')).status).toBe(201); // replaces

    // The last steps and samples may come with the result, saving a round trip at the end.
    const result = {
      seq: 2,
      outcome: 'SUCCEEDED',
      failReason: null,
      testCases: [testCase('testLogin'), testCase('testSearch')],
      steps: [
        { type: 'SENDING_RESULTS', time: now + 30 },
        { type: 'PROCESSING_RESULTS', time: now + 40 },
      ],
      samples: [{ timestamp: now + 22, cpuUsage: 0.75, memUsage: 52000, packageName: 'com.example' }],
    };
    expect((await agent.post(`/device-runs/${first!.deviceRunId}/result`, result)).status).toBe(200);
    // SENDING_RESULTS, even among other steps of a report, means the device run is finishing.
    const sending = {
      seq: 1,
      steps: [
        { type: 'RUNNING', time: now },
        { type: 'SENDING_RESULTS', time: now + 5 },
      ],
      samples: [],
    };
    expect((await agent.post(`/device-runs/${second!.deviceRunId}/progress`, sending)).status).toBe(200);
    expect(await h.ctx.store.deviceRuns.findById(second!.deviceRunId)).toMatchObject({
      state: 'FINISHING',
      currentStep: 'SENDING_RESULTS',
    });
    expect(
      (await agent.finish(second!.deviceRunId, 'FAILED', [testCase('testLogin'), testCase('testPay', 'FAILED')]))
        .status,
    ).toBe(200);

    const finished = await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true });
    expect(finished.body).toMatchObject({
      state: 'FINISHED',
      succeededDeviceCount: 1,
      failedDeviceCount: 1,
      testCaseCount: 4,
      successfulTestCaseCount: 3,
      failedTestCaseCount: 1,
      executionRatio: 1,
      successRatio: 0.5,
    });

    const session = `/api/v2/device-sessions/${first!.deviceRunId}`;
    expect((await alice.call('GET', session, { json: true })).body).toMatchObject({
      state: 'SUCCEEDED',
      testCasePassedCount: 2,
      installTime: now,
    });
    const steps = await alice.call('GET', `${session}/steps`, { json: true });
    expect(steps.body.data.map((s: { type: string }) => s.type)).toEqual([
      'WAITING',
      'PREPARING',
      'INSTALL',
      'RUNNING',
      'SENDING_RESULTS',
      'PROCESSING_RESULTS',
    ]);
    // Each step ends as the next starts, including those reported together.
    expect(
      steps.body.data
        .slice(2)
        .map((s: { startTimeMS: number; finishTimeMS: number | null }) => [s.startTimeMS, s.finishTimeMS]),
    ).toEqual([
      [now, now + 10],
      [now + 10, now + 30],
      [now + 30, now + 40],
      [now + 40, expect.any(Number)],
    ]);
    const samples = await alice.call('GET', `${session}/performance`, { json: true });
    // A device that does not report memory (iOS) leaves it null, not zero.
    expect(samples.body).toEqual([
      { timestamp: now + 20, cpuUsage: 0.25, memUsage: 51200, packageName: 'com.example' },
      { timestamp: now + 21, cpuUsage: 0.5, memUsage: null, packageName: null },
      { timestamp: now + 22, cpuUsage: 0.75, memUsage: 52000, packageName: 'com.example' },
    ]);
    const shots = await alice.call('GET', `${session}/screenshots`, { json: true });
    expect(shots.body.data).toHaveLength(1);
    const image = await alice.call('GET', `${session}/screenshots/${shots.body.data[0].id}`, { json: true });
    expect(image).toMatchObject({ status: 200, text: 'PNGDATA' });
    expect(image.headers['content-type']).toBe('image/png');
    const logs = await alice.call('GET', `${session}/logs`);
    expect(logs.text).toBe('line one\nline two\nline three\n');
    const outputs = await alice.call('GET', `${session}/output-file-set/files?tag[]=logs`, { json: true });
    expect(outputs.body.data.map((f: { name: string; tags: string[] }) => [f.name, f.tags])).toEqual([
      ['test.log', ['logs']],
    ]);
    const cases = await alice.call(
      'GET',
      `/api/me/projects/${run.projectId}/runs/${run.id}/device-sessions/${second!.deviceRunId}/test-case-runs`,
      { json: true },
    );
    expect(cases.body.data.map((c: { methodName: string; result: string }) => [c.methodName, c.result])).toEqual([
      ['testLogin', 'PASSED'],
      ['testPay', 'FAILED'],
    ]);
    const junit = await alice.call(
      'GET',
      `/api/me/projects/${run.projectId}/runs/${run.id}/device-runs/${second!.deviceRunId}/junit.xml`,
    );
    const suite = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(junit.text).testsuite;
    expect(suite).toMatchObject({ tests: '2', failures: '1' });
    expect(suite.testcase[1].failure).toMatchObject({ message: 'expected <1> but was <2>' });
    const legacyList = await alice.call('GET', `/api/me/projects/${run.projectId}/runs/${run.id}/device-runs`, {
      json: true,
    });
    expect(legacyList.body.data.map((d: { runStatus: string }) => d.runStatus).sort()).toEqual(['FAILED', 'SUCCEEDED']);
  });
});
