/** Starting runs: what is excluded or refused before anything is written, config checks, the stored project config. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CRAWLER, SERVER_SIDE, protocolWorld, startRun } from '../support/agent-protocol.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, parseXml } from '../support/harness.ts';

describe.each(ENGINES)('starting runs for the agent protocol (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let app: { id: number };
  let tests: { id: number };

  beforeEach(async () => {
    ({ h, alice, agent, app, tests } = await protocolWorld(engine));
  });
  afterEach(async () => h.close());

  const start = (body: Record<string, unknown>) => startRun(alice, body);

  it('excludes devices that cannot run the framework, and refuses what would not work before writing anything', async () => {
    const instrumentation = await fixtures.file(h.ctx, alice.user, {
      name: 'tests.apk',
      inputType: 'TEST',
      osType: 'ANDROID',
      properties: { instrumentation_name: 'androidx.test.runner.AndroidJUnitRunner' },
    });
    const excluded = await start({
      frameworkId: 1,
      projectName: 'P',
      files: [
        { id: app.id, action: 'INSTALL' },
        { id: instrumentation.id, action: 'RUN_TEST' },
      ],
    });
    expect(excluded).toMatchObject({ state: 'FINISHED', deviceCount: 2, excludedDeviceCount: 2 });
    const sessions = await alice.call('GET', `/api/v2/runs/${excluded.id}/device-runs`, { json: true });
    expect(sessions.body.data.map((d: { excludeReason: string }) => d.excludeReason)).toEqual([
      'FRAMEWORK_NOT_SUPPORTED',
      'FRAMEWORK_NOT_SUPPORTED',
    ]);

    const bob = await h.user();
    const bobsFile = await fixtures.file(h.ctx, bob.user, {
      name: 'b.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
    });
    const ipa = await fixtures.file(h.ctx, alice.user, { name: 'app.ipa', inputType: 'APPLICATION', osType: 'IOS' });
    const before = (await alice.call('GET', '/api/me/projects', { json: true })).body.total;
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ frameworkId: 999, projectName: 'X' }, 404, 'Framework'],
      [{ frameworkId: CRAWLER, projectName: 'X' }, 400, 'needs the app'],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: bobsFile.id }] }, 404, 'File'],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: tests.id, action: 'INSTALL' }] }, 400, 'not an app'],
      [
        { frameworkId: CRAWLER, projectName: 'X', files: [{ id: ipa.id }] },
        400,
        'is an IOS app; this run is for ANDROID',
      ],
      [{ frameworkId: SERVER_SIDE, projectName: 'X', files: [{ id: app.id }] }, 400, 'needs the tests'],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: app.id }], timeout: 99999 }, 400, 'allows at most 3600'],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: app.id }], deviceIds: [999999] }, 404, 'Device'],
      [
        { frameworkId: CRAWLER, projectName: 'X', files: [{ id: app.id }], deviceIds: [agent.deviceIds.get('i1')] },
        400,
        'is an IOS device',
      ],
      [{ frameworkId: CRAWLER, projectName: 'X', files: [{ id: app.id }], deviceGroupId: 999999 }, 404, 'Device group'],
      [{ frameworkId: 19, projectName: 'X' }, 400, 'UI Automation is not supported with current Xcode'],
      [{ frameworkId: CRAWLER, files: [{ id: app.id }] }, 400, "'projectId' or 'projectName'"],
      [{ frameworkId: 'abc', projectName: 'X' }, 400, "'frameworkId'"],
      [
        {
          frameworkId: CRAWLER,
          projectName: 'X',
          files: [{ id: app.id }],
          testRunParameters: [{ key: '1 bad', value: 'x' }],
        },
        400,
        'environment variable name',
      ],
    ];
    for (const [body, status, message] of cases) {
      const answer = await alice.call('POST', '/api/v2/runs', { json: true, body });
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.body.message, JSON.stringify(body)).toContain(message);
    }
    const empty = (
      await alice.call('POST', '/api/me/device-groups', {
        json: true,
        form: { displayName: 'Empty', osType: 'ANDROID' },
      })
    ).body.id;
    const emptyAnswer = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: { frameworkId: CRAWLER, projectName: 'X', files: [{ id: app.id }], deviceGroupId: empty },
    });
    expect(emptyAnswer.status).toBe(400);
    expect(emptyAnswer.body.message).toContain('has no devices');
    expect((await alice.call('GET', '/api/me/projects', { json: true })).body.total).toBe(before);
  });

  it('validates a config without starting anything', async () => {
    const answer = await alice.call('POST', '/api/me/runs/config', {
      json: true,
      body: { frameworkId: CRAWLER, projectName: 'New', files: [{ id: app.id }] },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      runAvailable: true,
      maxTestTimeout: { unit: 'SECONDS', value: 3600 },
      frameworkId: CRAWLER,
    });
    expect(answer.body.computedDevices).toHaveLength(2);
    expect((await alice.call('GET', '/api/me/projects', { json: true })).body.total).toBe(0);
  });

  it('starts from the stored project config (the seed recipe), and refuses without usedDeviceGroupId', async () => {
    const project = (
      await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'iOS app', type: 'IOS' } })
    ).body.id;
    const missing = await alice.call('POST', '/api/v2/runs', { json: true, form: { projectId: String(project) } });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('usedDeviceGroupId');
    const groups = await alice.call('GET', '/api/me/device-groups?withPublic=true', { json: true });
    const iosGroup = groups.body.data.find((g: { osType: string }) => g.osType === 'IOS').id;
    await alice.call('POST', `/api/v2/projects/${project}/config`, {
      json: true,
      form: { mode: 'IOS_CRAWLER', usedDeviceGroupId: String(iosGroup) },
    });
    const ipa = await fixtures.file(h.ctx, alice.user, { name: 'app.ipa', inputType: 'APPLICATION', osType: 'IOS' });
    await h.ctx.store.files.insert({
      ...(await h.ctx.store.files.findOwned(alice.user.id, ipa.id))!,
      projectId: project,
      projectSlot: 'application',
    });
    const run = await alice.call('POST', '/api/v2/runs', { form: { projectId: String(project) } });
    expect(run.status).toBe(201);
    const parsed = parseXml(run.text).apiTestRun;
    expect(parsed).toMatchObject({ state: 'WAITING', deviceCount: '1', frameworkId: '18' });
    const { assignments } = await agent.claim(['i1']);
    expect(assignments).toMatchObject([{ kind: 'crawler' }]);
  });
});
