/**
 * How far a run and its device sessions have come (docs/api.md#steps-and-data-availability), as a
 * device host reports it through the agent protocol: the run's steps summed up from its current
 * sessions, a session's current step, which results each session has, a session's result-data.zip
 * (docs/api.md#result-zips) and its connections; on both engines, in JSON and XML, with another
 * user's ids answered 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Device } from '../../src/domain/devices.ts';
import { ApiConnection } from '../../src/api/present/run-progress.ts';
import { PROTOCOL_PREFIX } from '../../src/protocol/v1.ts';
import { notWellFormed } from '../support/any-text.ts';
import { CONNECTION, JAVA_CONNECTION } from '../support/client-models.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent, testCase } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, parseXml } from '../support/harness.ts';
import { unzip } from '../support/unzip.ts';

const LOG = Buffer.from('I/TestRunner: started\n'.repeat(50));
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
const VIDEO = Buffer.alloc(5000, 7);

interface RunStepItem {
  id: number;
  type: string;
  startTimeMS: number;
  finishTimeMS: number | null;
  failReason: string | null;
  deviceSessionCount: number;
  finishedDeviceSessionCount: number;
}

describe.each(ENGINES)('steps, data availability, result-data.zip and connections (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let bob: TestUser;
  let agent: FakeAgent;
  let devices: Device[];
  let projectId: number;
  const serials = ['a', 'b', 'c'].map((letter) => `progress-${letter}-${engine}`);
  /** The run the tests follow, and its sessions on devices a, b and c. */
  let runId: number;
  let a: number;
  let b: number;
  let c: number;
  let start: number;

  beforeAll(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    bob = await h.user();
    projectId = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Progress' } })).body.id;
    agent = await fakeAgent(h.app, h.ctx, `progress-${engine}`);
    await agent.hello(serials.map((serial) => androidDevice(serial, `Phone ${serial}`)));
    await agent.cleanAll();
    const byId = await h.ctx.store.devices.byIds([...agent.deviceIds.values()]);
    devices = serials.map((serial) => byId.get(agent.deviceIds.get(serial)!)!);
    start = h.ctx.clock();
    runId = (await fixtures.run(h.ctx, alice.user, projectId, devices, ['WAITING', 'WAITING', 'WAITING'])).id;
    const sessions = (await h.ctx.store.deviceRuns.currentOfRun(runId)).map((session) => session.id);
    [a, b, c] = sessions as [number, number, number];
  });
  afterAll(async () => h?.close());

  const get = async (who: TestUser, path: string) => {
    const answer = await who.call('GET', `/api/v2${path}`, { json: true });
    expect(answer.status, `${path}: ${answer.text}`).toBe(200);
    return answer.body;
  };
  const runSteps = async (): Promise<RunStepItem[]> => (await get(alice, `/me/runs/${runId}/steps`)).data;
  const availability = async () => get(alice, `/me/projects/${projectId}/runs/${runId}/data-availability`);
  const artifact = (deviceRunId: number, name: string, kind: string, bytes: Buffer) =>
    h.app.inject({
      method: 'PUT',
      url: `${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/artifacts?name=${encodeURIComponent(name)}&kind=${kind}`,
      payload: bytes,
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/octet-stream' },
    });
  const zipOf = (who: TestUser, path: string) =>
    h.app.inject({
      method: 'GET',
      url: `/api/v2${path}`,
      headers: { authorization: `Basic ${Buffer.from(`${who.key}:`).toString('base64')}`, accept: 'application/json' },
    });

  it('follows a run from waiting to finished, step by step, as its sessions report', async () => {
    // Nothing has started: the run waits, with its three sessions.
    expect(await runSteps()).toEqual([
      {
        id: 1,
        selfURI: null,
        testRunId: runId,
        type: 'WAITING',
        startTimeMS: start,
        finishTimeMS: null,
        failReason: null,
        deviceSessionCount: 3,
        finishedDeviceSessionCount: 0,
      },
    ]);
    expect(await get(alice, `/me/device-sessions/${a}/steps/current`)).toMatchObject({
      deviceSessionId: a,
      type: 'WAITING',
      startTimeMS: start,
      finishTimeMS: null,
    });

    // Devices a and b take theirs; c's stays waiting, so WAITING is not over.
    h.advance(1000);
    const claimed = await agent.claim(serials.slice(0, 2));
    expect(claimed.assignments.map((assignment) => assignment.deviceRunId).sort((x, y) => x - y)).toEqual([a, b]);
    const claimTime = h.ctx.clock();
    let steps = await runSteps();
    expect(steps.map((step) => [step.type, step.deviceSessionCount, step.finishedDeviceSessionCount])).toEqual([
      ['WAITING', 3, 2],
      ['PREPARING', 2, 0],
    ]);
    expect(steps[0]!.finishTimeMS).toBeNull();
    expect(steps[1]).toMatchObject({ id: 2, startTimeMS: claimTime, finishTimeMS: null });

    // a installs and runs, with samples and results; b fails while preparing.
    const t = claimTime + 100;
    const progress = await agent.post(`/device-runs/${a}/progress`, {
      seq: 1,
      steps: [
        { type: 'INSTALL', time: t },
        { type: 'RUNNING', time: t + 10 },
      ],
      samples: [{ timestamp: t + 20, cpuUsage: 0.25, memUsage: 51200, packageName: 'com.example' }],
    });
    expect(progress.status, progress.text).toBe(200);
    expect((await artifact(a, 'device.log', 'log', LOG)).statusCode).toBe(201);
    expect((await artifact(a, 'home.png', 'screenshot', PNG)).statusCode).toBe(201);
    expect((await artifact(a, 'screen.mp4', 'video', VIDEO)).statusCode).toBe(201);
    h.advance(1000);
    const failed = await agent.post(`/device-runs/${b}/result`, {
      seq: 1000,
      outcome: 'WARNING',
      failReason: 'The app could not be installed',
      testCases: [],
    });
    expect(failed.status, failed.text).toBe(200);
    steps = await runSteps();
    expect(steps.map((step) => [step.type, step.deviceSessionCount, step.finishedDeviceSessionCount])).toEqual([
      ['WAITING', 3, 2],
      ['PREPARING', 2, 2],
      ['INSTALL', 1, 1],
      ['RUNNING', 1, 0],
    ]);
    // c may still prepare, install and run: none of those is over, though a and b left PREPARING.
    expect(steps.map((step) => step.finishTimeMS)).toEqual([null, null, null, null]);
    expect(steps.find((step) => step.type === 'INSTALL')!.startTimeMS).toBe(t);
    expect(await get(alice, `/me/device-sessions/${a}/steps/current`)).toMatchObject({
      type: 'RUNNING',
      startTimeMS: t + 10,
      finishTimeMS: null,
    });

    // a finishes; c is aborted before it ever started: every step is over.
    const result = await agent.post(`/device-runs/${a}/result`, {
      seq: 1001,
      outcome: 'SUCCEEDED',
      failReason: null,
      testCases: [testCase('testLogin')],
      steps: [
        { type: 'SENDING_RESULTS', time: t + 30 },
        { type: 'PROCESSING_RESULTS', time: t + 40 },
      ],
      samples: [{ timestamp: t + 21, cpuUsage: 0.5, memUsage: null, packageName: null }],
    });
    expect(result.status, result.text).toBe(200);
    h.advance(1000);
    const aborted = await alice.call('POST', `/api/v2/me/device-sessions/${c}/abort`, { json: true });
    expect(aborted.status, aborted.text).toBe(200);
    steps = await runSteps();
    expect(steps.map((step) => step.type)).toEqual([
      'WAITING',
      'PREPARING',
      'INSTALL',
      'RUNNING',
      'SENDING_RESULTS',
      'PROCESSING_RESULTS',
    ]);
    // Ids are places in the timeline: UNINSTALL (3) was not a step of this run.
    expect(steps.map((step) => step.id)).toEqual([1, 2, 4, 5, 6, 7]);
    for (const step of steps) {
      expect(step.finishTimeMS, step.type).not.toBeNull();
      expect(step.finishedDeviceSessionCount, step.type).toBe(step.deviceSessionCount);
      expect(step.finishTimeMS!, step.type).toBeGreaterThanOrEqual(step.startTimeMS);
    }
    expect(steps[0]).toMatchObject({ deviceSessionCount: 3, finishTimeMS: h.ctx.clock() });
    expect(steps.find((step) => step.type === 'RUNNING')).toMatchObject({ startTimeMS: t + 10, finishTimeMS: t + 30 });

    // The ended sessions' current steps are the last they were in.
    expect(await get(alice, `/me/device-sessions/${a}/steps/current`)).toMatchObject({
      type: 'PROCESSING_RESULTS',
      startTimeMS: t + 40,
    });
    expect((await get(alice, `/device-sessions/${b}/steps/current`)).type).toBe('PREPARING');
    const cCurrent = await get(alice, `/me/projects/${projectId}/runs/${runId}/device-sessions/${c}/steps/current`);
    expect(cCurrent).toMatchObject({ type: 'WAITING', startTimeMS: start, finishTimeMS: h.ctx.clock() });
    const legacy = await get(alice, `/me/projects/${projectId}/runs/${runId}/device-runs/${c}/steps/current`);
    expect(legacy).toEqual(cCurrent);
    // It is one of the session's steps, as the list shows it.
    const listed = (await get(alice, `/me/device-sessions/${a}/steps`)).data;
    expect(await get(alice, `/me/device-sessions/${a}/steps/current`)).toEqual(listed.at(-1));
  });

  it('tells which results each current session has, from what it stored', async () => {
    const answer = await availability();
    expect(answer).toMatchObject({
      id: runId,
      testRunId: runId,
      selfURI: `/users/${alice.user.id}/projects/${projectId}/runs/${runId}/data-availability`,
    });
    expect(answer.deviceRunDataAvailabilities).toEqual([
      {
        id: a,
        selfURI: null,
        deviceRunId: a,
        logs: true,
        performance: true,
        screenshots: true,
        video: true,
        buildLogs: false,
        resultsDataZip: true,
      },
      ...[b, c].map((id) => ({
        id,
        selfURI: null,
        deviceRunId: id,
        logs: false,
        performance: false,
        screenshots: false,
        video: false,
        buildLogs: false,
        resultsDataZip: false,
      })),
    ]);
    for (const path of [`/me/runs/${runId}/data-availability`, `/runs/${runId}/data-availability`])
      expect((await get(alice, path)).deviceRunDataAvailabilities).toEqual(answer.deviceRunDataAvailabilities);
    // Performance alone (samples, no file) counts, and so does an output file without a tag of its kind.
    const other = await fixtures.run(h.ctx, alice.user, projectId, devices, ['SUCCEEDED', 'FAILED']);
    const [sampled, withFile] = await h.ctx.store.deviceRuns.currentOfRun(other.id);
    await h.ctx.store.results.addSamples(sampled!.id, [
      { timestamp: 1, cpuUsage: 0.1, memUsage: 10, packageName: 'com.example' },
    ]);
    await fixtures.file(h.ctx, alice.user, {
      name: 'report.json',
      inputType: 'DATA',
      outputOf: withFile!.id,
      tags: [],
    });
    const mixed = (await get(alice, `/runs/${other.id}/data-availability`)).deviceRunDataAvailabilities;
    expect(mixed).toMatchObject([
      { deviceRunId: sampled!.id, performance: true, logs: false, resultsDataZip: true },
      { deviceRunId: withFile!.id, performance: false, logs: false, screenshots: false, resultsDataZip: true },
    ]);
  });

  it('zips everything a session produced as its result-data.zip, streamed', async () => {
    const zip = await zipOf(alice, `/me/projects/${projectId}/runs/${runId}/device-runs/${a}/result-data.zip`);
    expect(zip.statusCode).toBe(200);
    expect(zip.headers['content-type']).toBe('application/zip');
    expect(zip.headers['content-length']).toBeUndefined();
    expect(String(zip.headers['content-disposition'])).toContain(`device-session-${a}-result-data.zip`);
    const entries = await unzip(zip.rawPayload);
    expect(entries.map((entry) => entry.name)).toEqual(['device.log', 'home.png', 'screen.mp4', 'performance.csv']);
    expect(entries[0]!.bytes.equals(LOG)).toBe(true);
    expect(entries[1]!.bytes.equals(PNG)).toBe(true);
    expect(entries[2]!.bytes.equals(VIDEO)).toBe(true);
    const csv = entries[3]!.bytes.toString().split('\r\n');
    expect(csv[0]).toBe('timestamp,cpuUsage,memUsage,packageName');
    expect(csv.slice(1, 3)).toEqual([
      expect.stringMatching(/,0\.25,51200,com\.example$/),
      expect.stringMatching(/,0\.5,,$/),
    ]);
    // The same session under its other paths gives the same bytes.
    for (const path of [`/me/device-sessions/${a}/result-data.zip`, `/runs/${runId}/device-runs/${a}/result-data.zip`])
      expect((await zipOf(alice, path)).rawPayload.equals(zip.rawPayload), path).toBe(true);
    // A session with nothing gives a valid empty zip.
    const empty = await zipOf(alice, `/device-sessions/${c}/result-data.zip`);
    expect(empty.statusCode).toBe(200);
    expect(await unzip(empty.rawPayload)).toEqual([]);
  });

  it('counts only current sessions: a retried one leaves the run’s steps and availability', async () => {
    const retried = await alice.call('POST', `/api/v2/me/device-sessions/${a}/retry`, { json: true });
    expect(retried.status, retried.text).toBe(200);
    const sessions = (await h.ctx.store.deviceRuns.currentOfRun(runId)).map((session) => session.id);
    expect(sessions).not.toContain(a);
    const fresh = sessions.find((id) => ![b, c].includes(id))!;
    const listed = (await availability()).deviceRunDataAvailabilities.map(
      (item: { deviceRunId: number }) => item.deviceRunId,
    );
    expect(listed).toEqual([b, c, fresh]);
    const steps = await runSteps();
    // a's timeline went with it: b prepared, c only waited, the new session waits.
    expect(steps.map((step) => [step.type, step.deviceSessionCount, step.finishedDeviceSessionCount])).toEqual([
      ['WAITING', 3, 2],
      ['PREPARING', 1, 1],
    ]);
    expect(steps[0]!.finishTimeMS).toBeNull();
    // Its own record and results stay readable by its id.
    expect((await get(alice, `/me/device-sessions/${a}/steps/current`)).type).toBe('PROCESSING_RESULTS');
  });

  it('answers XML too, well-formed, named after the clients’ models', async () => {
    const headers = { authorization: `Basic ${Buffer.from(`${alice.key}:`).toString('base64')}` };
    const xml = async (path: string) => {
      const answer = await h.app.inject({ method: 'GET', url: `/api/v2${path}`, headers });
      expect(answer.statusCode, path).toBe(200);
      expect(notWellFormed(answer.body), path).toBeNull();
      return parseXml(answer.body);
    };
    const availabilityXml = await xml(`/runs/${runId}/data-availability`);
    expect(availabilityXml.apiTestRunDataAvailability.testRunId).toBe(String(runId));
    expect(
      availabilityXml.apiTestRunDataAvailability.deviceRunDataAvailabilities.apiDeviceSessionDataAvailability[0],
    ).toMatchObject({ deviceRunId: String(b), buildLogs: 'false' });
    const stepsXml = await xml(`/runs/${runId}/steps`);
    expect(stepsXml.apiList.data.apiTestRunStep[0].type).toBe('WAITING');
    expect((await xml(`/device-sessions/${b}/steps/current`)).apiDeviceSessionStep.type).toBe('PREPARING');
    expect((await xml(`/me/device-sessions/${b}/connections`)).apiList.total).toBe('0');
  });

  it('says why an excluded session has no current step, and lists no connections to a session', async () => {
    const excludedRun = await fixtures.run(h.ctx, alice.user, projectId, devices, ['EXCLUDED']);
    const [excluded] = await h.ctx.store.deviceRuns.currentOfRun(excludedRun.id);
    const answer = await alice.call('GET', `/api/v2/me/device-sessions/${excluded!.id}/steps/current`, { json: true });
    expect(answer.status).toBe(404);
    expect(answer.body.message).toContain('excluded (FRAMEWORK_NOT_SUPPORTED) and never ran');
    expect(await runStepsOf(excludedRun.id)).toEqual([]);

    for (const path of [
      `/me/device-sessions/${b}/connections`,
      `/device-sessions/${b}/connections`,
      `/me/projects/${projectId}/runs/${runId}/device-sessions/${b}/connections`,
    ]) {
      const connections = await get(alice, path);
      expect(connections).toMatchObject({ data: [], total: 0 });
    }
    // The list is empty, so its items' fields are checked on the declared schema: every field of the clients' models.
    const declared = Object.keys(ApiConnection.properties);
    expect(
      [...Object.keys(CONNECTION.fields), ...Object.keys(JAVA_CONNECTION.fields)].filter(
        (field) => !declared.includes(field),
      ),
    ).toEqual([]);
    const post = await alice.call('POST', `/api/v2/me/device-sessions/${b}/connections`, {
      json: true,
      form: { type: 'ADB' },
    });
    expect(post.status).toBe(405);
  });

  const runStepsOf = async (id: number) => (await get(alice, `/runs/${id}/steps`)).data;

  it("answers 404 for another user's run or session on every new path, and shows nothing of it", async () => {
    const paths = [
      `/me/projects/${projectId}/runs/${runId}/steps`,
      `/me/runs/${runId}/steps`,
      `/runs/${runId}/steps`,
      `/me/projects/${projectId}/runs/${runId}/data-availability`,
      `/runs/${runId}/data-availability`,
      `/me/device-sessions/${b}/steps/current`,
      `/device-sessions/${b}/steps/current`,
      `/me/projects/${projectId}/runs/${runId}/device-sessions/${b}/steps/current`,
      `/me/device-sessions/${b}/connections`,
      `/device-sessions/${b}/connections`,
      `/me/projects/${projectId}/runs/${runId}/device-runs/${b}/result-data.zip`,
      `/device-sessions/${b}/result-data.zip`,
      `/users/${bob.user.id}/runs/${runId}/steps`,
    ];
    for (const path of paths) {
      const answer = await bob.call('GET', `/api/v2${path}`, { json: true });
      expect(answer.status, path).toBe(404);
      expect(answer.text, path).not.toContain('Phone');
    }
    // Alice's own ids, crossed: a session under a run it is not of, a run under another project.
    const otherProject = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'P2' } })).body.id;
    for (const path of [
      `/me/projects/${otherProject}/runs/${runId}/steps`,
      `/me/projects/${otherProject}/runs/${runId}/data-availability`,
      `/me/projects/${otherProject}/runs/${runId}/device-sessions/${b}/steps/current`,
      `/me/projects/${projectId}/runs/${runId + 1000}/device-runs/${b}/result-data.zip`,
    ]) {
      const answer = await alice.call('GET', `/api/v2${path}`, { json: true });
      expect(answer.status, path).toBe(404);
    }
  });
});
