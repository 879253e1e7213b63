import { setTimeout as sleep } from 'node:timers/promises';
import { XMLParser } from 'fast-xml-parser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent, iosDevice, testCase } from '../support/fake-agent.ts';
import { claim } from '../../src/services/agent-session.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, call, createHarness, parseXml } from '../support/harness.ts';

const CRAWLER = 6;
const SERVER_SIDE = 7;

describe.each(ENGINES)('running on devices through the agent protocol (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let app: { id: number };
  let tests: { id: number };

  beforeEach(async () => {
    h = await createHarness(engine, { limits: { claimWaitMs: 50 } });
    alice = await h.user({ plan: 'GOLD' });
    agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1', 'Pixel 8'), androidDevice('a2', 'Galaxy S24'), iosDevice('i1', 'iPhone 15')]);
    await agent.cleanAll();
    app = await fixtures.file(h.ctx, alice.user, { name: 'app.apk', inputType: 'APPLICATION', osType: 'ANDROID', properties: { package_name: 'com.example', min_sdk: '24' } });
    tests = await fixtures.file(h.ctx, alice.user, { name: 'tests.zip', inputType: 'TEST', properties: { entry_script: 'run-tests.sh' } });
  });
  afterEach(async () => h.close());

  async function publicAndroidGroup(): Promise<number> {
    const groups = await alice.call('GET', '/api/me/device-groups?withPublic=true', { json: true });
    return groups.body.data.find((group: { displayName: string }) => group.displayName === 'All Android devices').id;
  }

  async function start(body: Record<string, unknown>) {
    const answer = await alice.call('POST', '/api/v2/runs', { json: true, body });
    expect(answer.status, answer.text).toBe(201);
    return answer.body;
  }

  it('registers devices, shows them to everyone, and puts them in public groups', async () => {
    const devices = await call(h.app, 'GET', '/api/v2/devices?sort=displayName_a', { json: true });
    expect(devices.body.data.map((d: { displayName: string; online: boolean; locked: boolean }) => [d.displayName, d.online, d.locked])).toEqual([
      ['Galaxy S24', true, false],
      ['iPhone 15', true, false],
      ['Pixel 8', true, false],
    ]);
    // Reported nulls stay null (an iOS device has no API level), not coerced to 0.
    const iphone = devices.body.data.find((d: { displayName: string }) => d.displayName === 'iPhone 15');
    expect(iphone.softwareVersion).toMatchObject({ releaseVersion: '17.4', apiLevel: null });
    const groups = await alice.call('GET', '/api/me/device-groups?withPublic=true', { json: true });
    expect(groups.body.data.map((g: { displayName: string; deviceCount: number }) => [g.displayName, g.deviceCount]).sort()).toEqual([
      ['All Android devices', 2],
      ['All iOS devices', 1],
    ]);
  });

  it('runs a test run from start to finish: queue, claim, steps, samples, artifacts, results', async () => {
    const run = await start({ osType: 'ANDROID', frameworkId: SERVER_SIDE, projectName: 'Shop', deviceGroupId: await publicAndroidGroup(), files: [{ id: app.id, action: 'INSTALL' }, { id: tests.id, action: 'RUN_TEST' }], testRunParameters: [{ key: 'ENV', value: 'staging' }], timeout: 120 });
    expect(run).toMatchObject({ state: 'WAITING', deviceCount: 2, waitingDeviceCount: 2, projectName: 'Shop', queuePosition: 1 });
    expect(run.message).toMatch(/^Waiting for 2 devices \(.*starting shortly/);

    const { assignments } = await agent.claim(['a1', 'a2']);
    expect(assignments).toHaveLength(2);
    const [first, second] = assignments;
    expect(first).toMatchObject({ kind: 'server-side', timeoutSeconds: 120, parameters: { ENV: 'staging' } });
    expect(first!.files.map((f) => f.action).sort()).toEqual(['INSTALL', 'RUN_TEST']);

    const download = await call(h.app, 'GET', first!.files.find((f) => f.action === 'INSTALL')!.url, { headers: { authorization: `Bearer ${agent.token}` } });
    expect(download.status).toBe(200);
    expect(download.text).toBe('contents of app.apk');
    const running = await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true });
    expect(running.body).toMatchObject({ state: 'RUNNING', runningDeviceCount: 2, message: null });

    const now = Date.now();
    const progress = { seq: 1, steps: [{ type: 'INSTALL', time: now }, { type: 'RUNNING', time: now + 10 }], samples: [{ timestamp: now + 20, cpuUsage: 0.25, memUsage: 51200, packageName: 'com.example' }, { timestamp: now + 21, cpuUsage: 0.5, memUsage: null, packageName: null }] };
    expect((await agent.post(`/device-runs/${first!.deviceRunId}/progress`, progress)).status).toBe(200);
    expect((await agent.post(`/device-runs/${first!.deviceRunId}/progress`, progress)).status).toBe(200); // retried: applied once

    const artifact = (name: string, kind: string, body: string) =>
      call(h.app, 'PUT', `/agent/v1/device-runs/${first!.deviceRunId}/artifacts?name=${name}&kind=${kind}`, { body, headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/octet-stream' } });
    expect((await artifact('shot1.png', 'screenshot', 'PNGDATA')).status).toBe(201);
    expect((await artifact('test.log', 'log', 'line one\nline two\n')).status).toBe(201);
    expect((await artifact('test.log', 'log', 'line one\nline two\nline three\n')).status).toBe(201); // replaces

    // The last steps and samples may come with the result, saving a round trip at the end.
    const result = { seq: 2, outcome: 'SUCCEEDED', failReason: null, testCases: [testCase('testLogin'), testCase('testSearch')], steps: [{ type: 'SENDING_RESULTS', time: now + 30 }, { type: 'PROCESSING_RESULTS', time: now + 40 }], samples: [{ timestamp: now + 22, cpuUsage: 0.75, memUsage: 52000, packageName: 'com.example' }] };
    expect((await agent.post(`/device-runs/${first!.deviceRunId}/result`, result)).status).toBe(200);
    expect((await agent.finish(second!.deviceRunId, 'FAILED', [testCase('testLogin'), testCase('testPay', 'FAILED')])).status).toBe(200);

    const finished = await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true });
    expect(finished.body).toMatchObject({ state: 'FINISHED', succeededDeviceCount: 1, failedDeviceCount: 1, testCaseCount: 4, successfulTestCaseCount: 3, failedTestCaseCount: 1, executionRatio: 1, successRatio: 0.5 });

    const session = `/api/v2/device-sessions/${first!.deviceRunId}`;
    expect((await alice.call('GET', session, { json: true })).body).toMatchObject({ state: 'SUCCEEDED', testCasePassedCount: 2, installTime: now });
    const steps = await alice.call('GET', `${session}/steps`, { json: true });
    expect(steps.body.data.map((s: { type: string }) => s.type)).toEqual(['WAITING', 'PREPARING', 'INSTALL', 'RUNNING', 'SENDING_RESULTS', 'PROCESSING_RESULTS']);
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
    expect(outputs.body.data.map((f: { name: string; tags: string[] }) => [f.name, f.tags])).toEqual([['test.log', ['logs']]]);
    const cases = await alice.call('GET', `/api/me/projects/${run.projectId}/runs/${run.id}/device-sessions/${second!.deviceRunId}/test-case-runs`, { json: true });
    expect(cases.body.data.map((c: { methodName: string; result: string }) => [c.methodName, c.result])).toEqual([['testLogin', 'PASSED'], ['testPay', 'FAILED']]);
    const junit = await alice.call('GET', `/api/me/projects/${run.projectId}/runs/${run.id}/device-runs/${second!.deviceRunId}/junit.xml`);
    const suite = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(junit.text).testsuite;
    expect(suite).toMatchObject({ tests: '2', failures: '1' });
    expect(suite.testcase[1].failure).toMatchObject({ message: 'expected <1> but was <2>' });
    const legacyList = await alice.call('GET', `/api/me/projects/${run.projectId}/runs/${run.id}/device-runs`, { json: true });
    expect(legacyList.body.data.map((d: { runStatus: string }) => d.runStatus).sort()).toEqual(['FAILED', 'SUCCEEDED']);
  });

  it('excludes devices that cannot run the framework, and refuses what would not work before writing anything', async () => {
    const instrumentation = await fixtures.file(h.ctx, alice.user, { name: 'tests.apk', inputType: 'TEST', osType: 'ANDROID', properties: { instrumentation_name: 'androidx.test.runner.AndroidJUnitRunner' } });
    const excluded = await start({ frameworkId: 1, projectName: 'P', files: [{ id: app.id, action: 'INSTALL' }, { id: instrumentation.id, action: 'RUN_TEST' }] });
    expect(excluded).toMatchObject({ state: 'FINISHED', deviceCount: 2, excludedDeviceCount: 2 });
    const sessions = await alice.call('GET', `/api/v2/runs/${excluded.id}/device-runs`, { json: true });
    expect(sessions.body.data.map((d: { excludeReason: string }) => d.excludeReason)).toEqual(['FRAMEWORK_NOT_SUPPORTED', 'FRAMEWORK_NOT_SUPPORTED']);

    const bob = await h.user();
    const bobsFile = await fixtures.file(h.ctx, bob.user, { name: 'b.apk', inputType: 'APPLICATION', osType: 'ANDROID' });
    const ipa = await fixtures.file(h.ctx, alice.user, { name: 'app.ipa', inputType: 'APPLICATION', osType: 'IOS' });
    const before = (await alice.call('GET', '/api/me/projects', { json: true })).body.total;
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ frameworkId: 999, projectName: 'X' }, 404, 'Framework'],
      [{ frameworkId: CRAWLER, projectName: 'X' }, 400, 'needs the app'],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: bobsFile.id }] }, 404, 'File'],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: tests.id, action: 'INSTALL' }] }, 400, 'not an app'],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: ipa.id }] }, 400, 'is an IOS app; this run is for ANDROID'],
      [{ frameworkId: SERVER_SIDE, projectName: 'X', files: [{ id: app.id }] }, 400, 'needs the tests'],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: app.id }], timeout: 99999 }, 400, 'allows at most 3600'],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: app.id }], deviceIds: [999999] }, 404, 'Device'],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: app.id }], deviceIds: [agent.deviceIds.get('i1')] }, 400, 'is an IOS device'],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: app.id }], deviceGroupId: 999999 }, 404, 'Device group'],
      [{ frameworkId: 19, projectName: 'X' }, 400, 'UI Automation is not supported with current Xcode'],
      [{ frameworkId: CRAWLER, files: [{ id: app.id }] }, 400, "'projectId' or 'projectName'"],
      [{ frameworkId: 'abc', projectName: 'X' }, 400, "'frameworkId'"],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: app.id }], testRunParameters: [{ key: '1 bad', value: 'x' }] }, 400, 'environment variable name'],
    ];
    for (const [body, status, message] of cases) {
      const answer = await alice.call('POST', '/api/v2/runs', { json: true, body });
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.body.message, JSON.stringify(body)).toContain(message);
    }
    const empty = (await alice.call('POST', '/api/me/device-groups', { json: true, form: { displayName: 'Empty', osType: 'ANDROID' } })).body.id;
    const emptyAnswer = await alice.call('POST', '/api/v2/runs', { json: true, body: { frameworkId: CRAWLER, projectName: 'X', files: [{ id: app.id }], deviceGroupId: empty } });
    expect(emptyAnswer.status).toBe(400);
    expect(emptyAnswer.body.message).toContain('has no devices');
    expect((await alice.call('GET', '/api/me/projects', { json: true })).body.total).toBe(before);
  });

  it('validates a config without starting anything', async () => {
    const answer = await alice.call('POST', '/api/me/runs/config', { json: true, body: { frameworkId: CRAWLER, projectName: 'New', files: [{ id: app.id }] } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ runAvailable: true, maxTestTimeout: { unit: 'SECONDS', value: 3600 }, frameworkId: CRAWLER });
    expect(answer.body.computedDevices).toHaveLength(2);
    expect((await alice.call('GET', '/api/me/projects', { json: true })).body.total).toBe(0);
  });

  it('starts from the stored project config (the seed recipe), and refuses without usedDeviceGroupId', async () => {
    const project = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'iOS app', type: 'IOS' } })).body.id;
    const missing = await alice.call('POST', '/api/v2/runs', { json: true, form: { projectId: String(project) } });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('usedDeviceGroupId');
    const groups = await alice.call('GET', '/api/me/device-groups?withPublic=true', { json: true });
    const iosGroup = groups.body.data.find((g: { osType: string }) => g.osType === 'IOS').id;
    await alice.call('POST', `/api/v2/projects/${project}/config`, { json: true, form: { mode: 'IOS_CRAWLER', usedDeviceGroupId: String(iosGroup) } });
    const ipa = await fixtures.file(h.ctx, alice.user, { name: 'app.ipa', inputType: 'APPLICATION', osType: 'IOS' });
    await h.ctx.store.files.insert({ ...(await h.ctx.store.files.findOwned(alice.user.id, ipa.id))!, projectId: project, projectSlot: 'application' });
    const run = await alice.call('POST', '/api/v2/runs', { form: { projectId: String(project) } });
    expect(run.status).toBe(201);
    const parsed = parseXml(run.text).apiTestRun;
    expect(parsed).toMatchObject({ state: 'WAITING', deviceCount: '1', frameworkId: '18' });
    const { assignments } = await agent.claim(['i1']);
    expect(assignments).toMatchObject([{ kind: 'crawler' }]);
  });

  it('takes waiting device runs by plan, then age, one at a time per device', async () => {
    const silver = await h.user({ plan: 'SILVER' });
    const platinum = await h.user({ plan: 'PLATINUM' });
    const device = agent.deviceIds.get('a1')!;
    const startFor = async (user: TestUser, name: string) => {
      const apk = await fixtures.file(h.ctx, user.user, { name: 'a.apk', inputType: 'APPLICATION', osType: 'ANDROID' });
      h.advance(1000);
      const answer = await user.call('POST', '/api/v2/runs', { json: true, body: { frameworkId: CRAWLER, projectName: name, files: [{ id: apk.id }], deviceIds: [device] } });
      expect(answer.status).toBe(201);
      return answer.body.id as number;
    };
    const order = [await startFor(silver, 'silver-1'), await startFor(alice, 'gold-1'), await startFor(platinum, 'platinum-1'), await startFor(alice, 'gold-2'), await startFor(platinum, 'platinum-2')];
    const waiting = await alice.call('GET', `/api/v2/runs/${order[3]}`, { json: true });
    expect(waiting.body.queuePosition).toBe(4);
    expect(waiting.body.message).toContain('3 device runs ahead');

    const taken: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { assignments } = await agent.claim(['a1']);
      expect(assignments).toHaveLength(1);
      const deviceRun = await h.ctx.store.deviceRuns.findById(assignments[0]!.deviceRunId);
      taken.push(deviceRun!.testRunId);
      expect((await agent.claim(['a1'], [assignments[0]!.deviceRunId])).assignments).toHaveLength(0); // busy: never two at once
      await agent.finish(assignments[0]!.deviceRunId, 'SUCCEEDED', [testCase('t')]);
      await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
    }
    expect(taken).toEqual([order[2], order[4], order[1], order[3], order[0]]);
  });

  it('hands an assignment out again when the answer to a claim was lost, never one the agent is running', async () => {
    await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [agent.deviceIds.get('a1')] });
    const first = await agent.claim(['a1', 'a2']);
    expect(first.assignments).toHaveLength(1);
    const id = first.assignments[0]!.deviceRunId;
    // The agent gave up on that request (or its answer never arrived): a1 still looks free to it.
    const again = await agent.claim(['a1', 'a2']);
    expect(again.assignments).toMatchObject([{ deviceRunId: id, deviceId: agent.deviceIds.get('a1'), kind: 'crawler' }]);
    expect((await agent.claim(['a2'], [id])).assignments).toEqual([]);
    expect((await agent.claim(['a1', 'a2'], [id])).assignments).toEqual([]);
    const steps = await h.ctx.store.deviceRuns.steps(id);
    expect(steps.map((step) => step.type)).toEqual(['WAITING', 'PREPARING']);
  });

  it('wakes a newer claim that looked before an older claim of the same agent took work it will never receive', async () => {
    const slow = await createHarness(engine, { limits: { claimWaitMs: 20_000 } });
    try {
      const owner = await slow.user();
      const host = await fakeAgent(slow.app, slow.ctx, 'host-2');
      await host.hello([androidDevice('x1')]);
      await host.cleanAll();
      const deviceId = host.deviceIds.get('x1')!;
      const agentRecord = (await slow.ctx.store.agents.list()).find((candidate) => candidate.name === 'host-2')!;
      const project = await owner.call('POST', '/api/me/projects', { json: true, body: 'name=P', headers: { 'content-type': 'application/x-www-form-urlencoded' } });

      // The agent hung up on its first claim to claim again; the new claim finds nothing yet and waits.
      const started = performance.now();
      const newer = host.post('/claims', { deviceIds: [deviceId], running: [], waitMs: 20_000 });
      await sleep(300);
      // Meanwhile the first claim, still working on the server, takes a device run (its answer goes nowhere).
      const run = await fixtures.run(slow.ctx, owner.user, project.body.id, [(await slow.ctx.store.devices.findById(deviceId))!], ['WAITING']);
      const older = await claim(slow.ctx, agentRecord, { deviceIds: [deviceId], running: [], waitMs: 0 }, AbortSignal.abort());
      expect(older.assignments).toHaveLength(1);

      const answer = await newer;
      expect(answer.body.assignments).toMatchObject([{ deviceRunId: older.assignments[0]!.deviceRunId, deviceId }]);
      expect(performance.now() - started).toBeLessThan(10_000); // woken, not answered at the end of its wait
      expect(run.state).toBe('WAITING');
    } finally {
      await slow.close();
    }
  });

  it('has a device cleaned when the device run it was given ended before the agent ever received it', async () => {
    const run = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [agent.deviceIds.get('a1')], maxAutoRetriesCount: 1 });
    const lost = await agent.claim(['a1']); // this answer never reaches the agent
    expect(lost.assignments).toHaveLength(1);
    // The agent keeps heartbeating, but not for a device run it does not know: the lease runs out.
    h.advance(h.ctx.limits.leaseMs + 1);
    const reaper = (await import('../../src/jobs/reaper.ts')).startReaper({ ctx: h.ctx, log: () => undefined, intervalMs: 60_000, agentTtlMs: h.ctx.limits.leaseMs * 10 });
    await reaper.tick();
    await reaper.stop();

    const claimed = await agent.claim(['a1']);
    expect(claimed).toMatchObject({ assignments: [], clean: [agent.deviceIds.get('a1')] });
    expect((await h.ctx.store.devices.findById(agent.deviceIds.get('a1')!))!.state).toBe('CLEANING');
    await agent.post(`/devices/${agent.deviceIds.get('a1')}/cleaned`, { ok: true, report: 'clean' });
    const retry = await agent.claim(['a1']);
    expect(retry.assignments).toHaveLength(1);
    expect(retry.assignments[0]!.deviceRunId).not.toBe(lost.assignments[0]!.deviceRunId);
    expect((await agent.claim(['a2'])).clean).toEqual([]); // a device that is really free is left alone
    const sessions = await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true });
    expect(sessions.body.data.map((s: { state: string; retryState: string }) => [s.state, s.retryState]).sort()).toEqual([['RUNNING', 'AUTO'], ['WARNING', 'NONE']]);
  });

  it('never starts two device runs of a SERIAL run, or a SINGLE run twice, and finishes runs once, however many devices report at once', async () => {
    const many = Array.from({ length: 8 }, (_, i) => androidDevice(`m${i}`, `Phone ${i}`));
    const hosts = await Promise.all(many.map(async (device) => {
      const host = await fakeAgent(h.app, h.ctx, `host-${device.serial}`);
      await host.hello([device]);
      await host.cleanAll();
      return { host, serial: device.serial };
    }));
    const deviceIds = hosts.map(({ host, serial }) => host.deviceIds.get(serial)!);
    for (const scheduler of ['SERIAL', 'SINGLE']) {
      const run = await start({ frameworkId: CRAWLER, projectName: scheduler, files: [{ id: app.id }], deviceIds, scheduler });
      const answers = await Promise.all(hosts.map(({ host, serial }) => host.claim([serial])));
      expect(answers.flatMap((answer) => answer.assignments), scheduler).toHaveLength(1);
      const sessions = await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true });
      const states = sessions.body.data.map((s: { state: string }) => s.state);
      expect(states.filter((state: string) => state === 'RUNNING'), scheduler).toHaveLength(1);
      expect(states.filter((state: string) => state === (scheduler === 'SERIAL' ? 'WAITING' : 'EXCLUDED')), scheduler).toHaveLength(7);
      const taken = answers.findIndex((answer) => answer.assignments.length === 1);
      const { host, serial } = hosts[taken]!;
      await host.finish(answers[taken]!.assignments[0]!.deviceRunId, 'SUCCEEDED');
      await host.post(`/devices/${host.deviceIds.get(serial)}/cleaned`, { ok: true, report: 'clean' });
      if (scheduler === 'SERIAL') await alice.call('POST', `/api/v2/runs/${run.id}/abort`, { json: true });
    }

    // Device runs of one run ending all at once still finish the run, exactly once.
    const parallel = await start({ frameworkId: CRAWLER, projectName: 'PARALLEL', files: [{ id: app.id }], deviceIds, hookURL: 'https://ci.example.com/hook' });
    const claimed = await Promise.all(hosts.map(({ host, serial }) => host.claim([serial])));
    expect(claimed.flatMap((answer) => answer.assignments)).toHaveLength(8);
    await Promise.all(claimed.map((answer, index) => hosts[index]!.host.finish(answer.assignments[0]!.deviceRunId, 'SUCCEEDED')));
    const finished = await alice.call('GET', `/api/v2/runs/${parallel.id}`, { json: true });
    expect(finished.body).toMatchObject({ state: 'FINISHED', succeededDeviceCount: 8 });
    expect(await h.ctx.store.hooks.ofRun(parallel.id)).toHaveLength(1);
  });

  it('aborts: waiting ones at once, running ones through the agent, keeping their partial results', async () => {
    const run = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }] });
    const { assignments } = await agent.claim(['a1']);
    const aborted = await alice.call('POST', `/api/v2/runs/${run.id}/abort`, { json: true });
    expect(aborted.status).toBe(200);
    expect(aborted.body).toMatchObject({ state: 'FINISHED', abortedDeviceCount: 2 });
    const stop = await agent.post('/heartbeat', { running: [assignments[0]!.deviceRunId], unhealthy: [] });
    expect(stop.body.abort).toEqual([assignments[0]!.deviceRunId]);
    const late = await agent.finish(assignments[0]!.deviceRunId, 'ABORTED', [testCase('partial')]);
    expect(late.status).toBe(200);
    const session = await alice.call('GET', `/api/v2/device-sessions/${assignments[0]!.deviceRunId}`, { json: true });
    expect(session.body).toMatchObject({ state: 'ABORTED', testCaseAllCount: 1 });
    // The finished run keeps its final tallies; the late result must reach them.
    const total = await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true });
    expect(total.body).toMatchObject({ state: 'FINISHED', abortedDeviceCount: 2, testCaseCount: 1 });
  });

  it('retries failed device sessions as new sessions, and infrastructure failures automatically', async () => {
    const run = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [agent.deviceIds.get('a1')], maxAutoRetriesCount: 1 });
    let { assignments } = await agent.claim(['a1']);
    const started = (await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body;
    expect(started).toMatchObject({ state: 'RUNNING' });
    await agent.finish(assignments[0]!.deviceRunId, 'WARNING');
    await agent.post(`/devices/${agent.deviceIds.get('a1')}/cleaned`, { ok: true, report: 'clean' });
    const afterAuto = await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true });
    expect(afterAuto.body.data.map((s: { state: string; retryState: string }) => [s.state, s.retryState])).toEqual([['WARNING', 'NONE'], ['WAITING', 'AUTO']]);
    expect((await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body).toMatchObject({ state: 'WAITING', deviceCount: 1 });

    // Claimed again, the run runs again, and keeps the time it first started.
    h.advance(60_000);
    ({ assignments } = await agent.claim(['a1']));
    expect((await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body).toMatchObject({ state: 'RUNNING', startTime: started.startTime });
    await agent.finish(assignments[0]!.deviceRunId, 'FAILED', [testCase('t', 'FAILED')]);
    await agent.post(`/devices/${agent.deviceIds.get('a1')}/cleaned`, { ok: true, report: 'clean' });
    expect((await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body).toMatchObject({ state: 'FINISHED', deviceCount: 1, failedDeviceCount: 1 });
    const retried = await alice.call('POST', `/api/v2/runs/${run.id}/retry`, { json: true });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ state: 'WAITING', deviceCount: 1, failedDeviceCount: 0 });
    const sessions = await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true });
    expect(sessions.body.data.map((s: { retryState: string }) => s.retryState)).toEqual(['NONE', 'AUTO', 'MANUAL']);
    const noneLeft = await alice.call('POST', `/api/v2/device-sessions/${sessions.body.data[2].id}/retry`, { json: true });
    expect(noneLeft.status).toBe(400);
  });

  it('neither retries nor holds against the device what it refused to do for the run (its settings)', async () => {
    const device = agent.deviceIds.get('a1')!;
    const deviceRow = () => h.database.db.selectFrom('devices').select(['state', 'infra_failure_streak']).where('id', '=', device).executeTakeFirstOrThrow();
    const run = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [device], maxAutoRetriesCount: 2 });
    const { assignments } = await agent.claim(['a1']);
    const refused = { seq: 1000, outcome: 'WARNING', failReason: 'the device settings could not be applied: the password is wrong', testCases: [], refused: true };
    expect((await agent.post(`/device-runs/${assignments[0]!.deviceRunId}/result`, refused)).status).toBe(200);
    const sessions = (await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true })).body.data;
    expect(sessions.map((s: { state: string; retryState: string }) => [s.state, s.retryState])).toEqual([['WARNING', 'NONE']]);
    expect((await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body).toMatchObject({ state: 'FINISHED', warningDeviceCount: 1 });
    // The device is cleaned as after any run, with no infrastructure failure counted against it
    // (an ordinary WARNING would count one, and three in a row take it out of service).
    expect(await deviceRow()).toEqual({ state: 'CLEANING', infra_failure_streak: 0 });
    await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
    const next = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [device] });
    const [again] = (await agent.claim(['a1'])).assignments;
    await agent.finish(again!.deviceRunId, 'WARNING');
    expect(await deviceRow()).toEqual({ state: 'CLEANING', infra_failure_streak: 1 });
    expect((await alice.call('GET', `/api/v2/runs/${next.id}`, { json: true })).body.state).toBe('FINISHED');
    await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
  });

  it('gives up on device runs of a lost agent, and fails what a restarted agent was running', async () => {
    const run = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }] });
    const { assignments } = await agent.claim(['a1', 'a2']);
    h.advance(h.ctx.limits.leaseMs + 1);
    const reaper = (await import('../../src/jobs/reaper.ts')).startReaper({ ctx: h.ctx, log: () => undefined, intervalMs: 60_000, agentTtlMs: 15_000 });
    await reaper.tick();
    await reaper.stop();
    const sessions = await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true });
    expect(sessions.body.data.map((s: { state: string }) => s.state)).toEqual(['WARNING', 'WARNING']);
    const devices = await call(h.app, 'GET', '/api/v2/devices?filter=online_eq_false', { json: true });
    expect(devices.body.total).toBe(3);
    const late = await agent.finish(assignments[0]!.deviceRunId, 'SUCCEEDED');
    expect(late.status).toBe(409);
    expect(late.body.message).toContain('no longer holds it');

    const other = await fakeAgent(h.app, h.ctx, 'intruder');
    const intrusion = await other.finish(assignments[1]!.deviceRunId, 'SUCCEEDED');
    expect(intrusion.status).toBe(409);
    expect((await call(h.app, 'POST', '/agent/v1/heartbeat', { body: { running: [], unhealthy: [] }, headers: { authorization: `Bearer ${alice.key}` } })).status).toBe(401);
  });

  it('takes a device out of service when cleaning fails, and waiting runs say so', async () => {
    const device = agent.deviceIds.get('a1')!;
    const run = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [device] });
    const { assignments } = await agent.claim(['a1']);
    await agent.finish(assignments[0]!.deviceRunId, 'SUCCEEDED', [testCase('t')]);
    const next = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [device] });
    const cleaned = await agent.post(`/devices/${device}/cleaned`, { ok: false, report: 'package com.example could not be removed' });
    expect(cleaned.body).toEqual({ state: 'NOT_OPERATIONAL' });
    const waiting = await alice.call('GET', `/api/v2/runs/${next.id}`, { json: true });
    expect(waiting.body.message).toContain('not operational (cleaning failed: package com.example could not be removed)');
    expect((await agent.claim(['a1'])).assignments).toHaveLength(0);
    const listed = await call(h.app, 'GET', `/api/v2/devices/${device}`, { json: true });
    expect(listed.body).toMatchObject({ locked: true, lockReason: 'NOT_OPERATIONAL', available: false });
    expect(run.id).not.toBe(next.id);

    // An operator returns it: the agent hears to clean it on its next heartbeat, and once clean it takes the waiting run.
    expect((await agent.post('/heartbeat', { running: [], unhealthy: [] })).body.clean).toEqual([]);
    expect((await alice.call('POST', `/api/admin/devices/${device}/return-to-service`, { json: true, body: {} })).status).toBe(403);
    const operator = await h.user({ role: 'ADMIN' });
    const returned = await operator.call('POST', `/api/admin/devices/${device}/return-to-service`, { json: true, body: {} });
    expect(returned.status, returned.text).toBe(200);
    expect(returned.body).toMatchObject({ state: 'CLEANING' });
    expect((await operator.call('POST', `/api/admin/devices/${device}/return-to-service`, { json: true, body: {} })).status).toBe(409);
    expect((await agent.post('/heartbeat', { running: [], unhealthy: [] })).body.clean).toEqual([device]);
    expect((await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' })).body).toEqual({ state: 'IDLE' });
    expect((await agent.claim(['a1'])).assignments.map((assignment) => assignment.deviceId)).toEqual([device]);
  });
});
