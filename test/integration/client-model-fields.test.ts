/**
 * Every record answers the fields the public clients' models read, in their JSON types
 * (test/support/client-models.ts, written from the models; docs/api.md#fields-of-the-records): real
 * answers of a flow on each engine, a device host reporting through the agent protocol, checked
 * field by field; and the same records in XML stay well-formed, with the new fields in them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_MAX_TIMEOUT_SECONDS } from '../../src/domain/users.ts';
import { notWellFormed } from '../support/any-text.ts';
import * as models from '../support/client-models.ts';
import type { ClientModel, JsonType } from '../support/client-models.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent, testCase } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, createHarness } from '../support/harness.ts';
import { type World, seedWorld } from '../support/world.ts';

const SERVER_SIDE = 7;

function typeOf(value: unknown): JsonType {
  if (Array.isArray(value)) return 'array';
  return typeof value as JsonType;
}

/** What is wrong with `record` as a `model`: its missing fields and those of another type. */
function mismatches(record: Record<string, unknown>, model: ClientModel): string[] {
  const wrong: string[] = [];
  for (const [field, type] of Object.entries(model.fields)) {
    if (!(field in record)) wrong.push(`${field}: missing`);
    else if (record[field] !== null && type !== 'any' && typeOf(record[field]) !== type)
      wrong.push(`${field}: ${typeOf(record[field])} (${JSON.stringify(record[field])}), the model says ${type}`);
  }
  return wrong;
}

function expectModels(where: string, record: unknown, ...checked: ClientModel[]): void {
  expect(typeOf(record), where).toBe('object');
  for (const model of checked)
    expect(mismatches(record as Record<string, unknown>, model), `${where} as ${model.source}`).toEqual([]);
}

describe.each(ENGINES)("records carry the fields of the clients' models (%s)", (engine) => {
  let h: Harness;
  let world: World;
  let agent: FakeAgent;

  beforeAll(async () => {
    h = await createHarness(engine, { limits: { claimWaitMs: 50 } });
    world = await seedWorld(h);
    agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1', 'Pixel 8')]);
    await agent.cleanAll();
  }, 60_000);
  afterAll(async () => h?.close());

  const get = async (path: string) => {
    const answer = await world.user.call('GET', `/api/v2${path}`, { json: true });
    expect(answer.status, `GET ${path}: ${answer.text}`).toBe(200);
    return answer.body;
  };
  const xml = async (path: string) => {
    const answer = await world.user.call('GET', `/api/v2${path}`);
    expect(answer.status, path).toBe(200);
    expect(notWellFormed(answer.text), path).toBeNull();
    return answer.text;
  };

  it('answers every field of the models, in their types, in JSON and XML', async () => {
    const { ids } = world;
    const profile = {
      address: 'Street 1 & 2',
      city: 'Oulu',
      code: '90100',
      state: 'North <Ostrobothnia>',
      phone: '+358 1234',
      vatId: 'FI123',
    };
    const updated = await world.user.call('POST', '/api/v2/me', { json: true, form: profile });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject(profile);

    // A run a device host ran and reported, with test cases.
    const app = await fixtures.file(h.ctx, world.user.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example' },
    });
    const tests = await fixtures.file(h.ctx, world.user.user, {
      name: 'tests.zip',
      inputType: 'TEST',
      properties: { entry_script: 'run-tests.sh' },
    });
    const config = {
      osType: 'ANDROID',
      frameworkId: SERVER_SIDE,
      projectId: ids.projectId,
      files: [
        { id: app.id, action: 'INSTALL' },
        { id: tests.id, action: 'RUN_TEST' },
      ],
      deviceIds: [agent.deviceIds.get('a1')!],
    };
    const plan = await world.user.call('POST', '/api/v2/me/runs/config', { json: true, body: config });
    expect(plan.status, plan.text).toBe(200);
    const started = await world.user.call('POST', '/api/v2/runs', { json: true, body: config });
    expect(started.status, started.text).toBe(201);
    const run = started.body;
    const { assignments } = await agent.claim(['a1']);
    const session = assignments[0]!.deviceRunId;
    expect((await agent.finish(session, 'FAILED', [testCase('passes'), testCase('fails', 'FAILED')])).status).toBe(200);

    // The account, with its roles.
    const me = await get('/me');
    expectModels('/me', me, models.USER, models.JAVA_USER);
    for (const role of me.roles) expectModels('/me roles', role, models.ROLE, models.JAVA_ROLE);
    expect(me).toMatchObject({ ...profile, mainUserId: me.id, mainUserEmail: me.email, accountId: me.id });

    // Projects, alone and listed (with their runs and a run's device runs embedded).
    expectModels('project', await get(`/me/projects/${ids.projectId}`), models.PROJECT, models.JAVA_PROJECT);
    const projects = await get('/me/projects?limit=5&embedRuns=2');
    projects.data.forEach((project: Record<string, unknown>, index: number) => {
      expectModels('listed project', project, models.PROJECT);
      expect(project.rowIndex).toBe(index);
    });
    const embedded = projects.data.find((project: { id: number }) => project.id === ids.projectId).testRuns;
    expect(embedded.length).toBeGreaterThan(0);
    for (const listed of embedded) expectModels('embedded run', listed, models.TEST_RUN);

    // The run, its config (with its files) and the user's runs.
    const read = await get(`/me/projects/${ids.projectId}/runs/${run.id}`);
    expectModels('run', read, models.TEST_RUN, models.JAVA_TEST_RUN);
    expectModels('run config', read.config, models.TEST_RUN_CONFIG);
    expect(read.config).toMatchObject({
      id: run.id,
      testRunId: run.id,
      runAvailable: true,
      projectName: read.projectName,
    });
    const maxTimeout = PLAN_MAX_TIMEOUT_SECONDS[world.user.user.plan];
    expect(read.config.maxTestTimeout).toEqual({ unit: 'SECONDS', value: maxTimeout });
    for (const file of read.config.files) expectModels('run config file', file, models.FILE_CONFIG);
    expect(await get(`/me/projects/${ids.projectId}/runs/${run.id}/config`)).toEqual(read.config);
    const runs = await get('/me/runs');
    runs.data.forEach((listed: Record<string, unknown>, index: number) => {
      expectModels('listed run', listed, models.TEST_RUN);
      expect(listed.rowIndex).toBe(index);
    });

    // The plan and the defaults are TestRunConfigs too; the plan's files come with the file.
    expectModels('plan', plan.body, models.TEST_RUN_CONFIG);
    for (const file of plan.body.files) {
      expectModels('plan file', file, models.FILE_CONFIG);
      expectModels('plan file file', file.file, models.USER_FILE);
    }
    expect(plan.body.files.map((file: { availableActions: string[] }) => file.availableActions)).toEqual([
      ['INSTALL', 'COPY_TO_DEVICE'],
      ['RUN_TEST', 'COPY_TO_DEVICE'],
    ]);
    expectModels('defaults', await get('/me/runs/config'), models.TEST_RUN_CONFIG);

    // Device sessions with their device, steps, test cases and screenshots.
    const sessions = await get(`/me/projects/${ids.projectId}/runs/${run.id}/device-sessions`);
    for (const listed of sessions.data) {
      expectModels('device session', listed, models.DEVICE_SESSION, models.JAVA_DEVICE_SESSION);
      expectModels('device session device', listed.device, models.DEVICE, models.JAVA_DEVICE);
      expectModels('software version', listed.device.softwareVersion, models.SOFTWARE_VERSION);
      expect(listed).toMatchObject({
        projectName: read.projectName,
        testRunName: read.displayName,
        deviceRunId: listed.id,
      });
    }
    expectModels('device session', await get(`/me/device-sessions/${session}`), models.DEVICE_SESSION);
    for (const listed of (await get(`/me/projects/${ids.projectId}/runs/${run.id}/device-runs`)).data) {
      expectModels('device run', listed, models.DEVICE_RUN);
      expectModels('device run state', listed.currentState, models.DEVICE_RUN_STATE);
    }
    const states = await get(`/me/projects/${ids.projectId}/runs/${run.id}/device-runs/${session}/states`);
    expect(states.data.length).toBeGreaterThan(0);
    for (const state of states.data) expectModels('device run state', state, models.DEVICE_RUN_STATE);
    const steps = await get(`/me/device-sessions/${session}/steps`);
    expect(steps.data.length).toBeGreaterThan(0);
    for (const step of steps.data) expectModels('step', step, models.DEVICE_SESSION_STEP);
    expectModels('current step', await get(`/me/device-sessions/${session}/steps/current`), models.DEVICE_SESSION_STEP);
    const availability = await get(`/me/projects/${ids.projectId}/runs/${run.id}/data-availability`);
    expectModels(
      'data availability',
      availability,
      models.TEST_RUN_DATA_AVAILABILITY,
      models.JAVA_TEST_RUN_DATA_AVAILABILITY,
    );
    expect(availability.deviceRunDataAvailabilities.length).toBeGreaterThan(0);
    for (const item of availability.deviceRunDataAvailabilities)
      expectModels(
        'session data availability',
        item,
        models.DEVICE_SESSION_DATA_AVAILABILITY,
        models.JAVA_DEVICE_SESSION_DATA_AVAILABILITY,
      );
    const cases = await get(`/me/device-sessions/${session}/test-case-runs`);
    expect(cases.data).toHaveLength(2);
    for (const listed of cases.data) expectModels('test case run', listed, models.TEST_CASE_RUN);
    const screenshots = await get(`/me/device-sessions/${ids.deviceSessionId}/screenshots`);
    expect(screenshots.data.length).toBeGreaterThan(0);
    for (const screenshot of screenshots.data) expectModels('screenshot', screenshot, models.SCREENSHOT);
    // A session's output files, in a stable order (by id, not by name) however often they are read.
    for (const name of ['z-last-by-name.log', 'a-first-by-name.log'])
      await fixtures.file(h.ctx, world.user.user, { name, inputType: 'DATA', outputOf: ids.deviceSessionId! });
    const outputs = `/me/device-sessions/${ids.deviceSessionId}/output-file-set/files`;
    const outputFiles = (await get(outputs)).data as Array<{ id: number }>;
    expect(outputFiles.length).toBeGreaterThan(2);
    for (const output of outputFiles) expectModels('output file', output, models.USER_FILE);
    const outputIds = outputFiles.map((output) => output.id);
    expect(outputIds).toEqual([...outputIds].sort((a, b) => a - b));
    expect(((await get(outputs)).data as Array<{ id: number }>).map((output) => output.id)).toEqual(outputIds);

    // Devices and groups.
    expectModels('device', await get(`/devices/${ids.deviceId}`), models.DEVICE, models.JAVA_DEVICE);
    for (const listed of (await get(`/me/device-groups/${ids.groupId}/devices`)).data)
      expectModels('device in a group', listed, models.DEVICE, models.JAVA_DEVICE);
    const group = await get(`/me/device-groups/${ids.groupId}`);
    expectModels('device group', group, models.DEVICE_GROUP, models.JAVA_DEVICE_GROUP);
    expect(group.userEmail).toBe(world.user.user.email);
    for (const listed of (await get('/me/device-groups?withPublic=true')).data)
      expectModels('listed device group', listed, models.DEVICE_GROUP);

    // Labels and the device picker (docs/api.md#device-selection).
    const withProperties = await get(`/devices/${ids.deviceId}?withProperties=true`);
    expectModels('device with properties', withProperties, models.DEVICE);
    expect(withProperties.properties.data.length).toBeGreaterThan(0);
    for (const property of withProperties.properties.data)
      expectModels('device property', property, models.DEVICE_PROPERTY, models.JAVA_DEVICE_PROPERTY);
    for (const listed of (await get('/labels')).data)
      expectModels('label', listed, models.DEVICE_PROPERTY, models.JAVA_DEVICE_PROPERTY);
    for (const listed of (await get(`/me/device-groups/${ids.groupId}/selectors`)).data)
      expectModels('selector', listed, models.DEVICE_PROPERTY);
    for (const listed of (await get('/label-groups')).data)
      expectModels('label group', listed, models.LABEL_GROUP, models.JAVA_LABEL_GROUP);
    const picker = await get('/devices/filters');
    expectModels('device picker', picker, models.DEVICE_PICKER);
    expect(picker.deviceFilterGroups.length).toBeGreaterThan(0);
    for (const filterGroup of picker.deviceFilterGroups) {
      expectModels('device filter group', filterGroup, models.DEVICE_FILTER_GROUP);
      for (const filter of filterGroup.deviceFilters) expectModels('device filter', filter, models.DEVICE_FILTER);
    }
    // Sharing (docs/api.md#sharing): the world's project is shared with an access group of its owner's.
    const accessGroup = await get(`/me/access-groups/${ids.accessGroupId}`);
    expectModels('access group', accessGroup, models.ACCESS_GROUP);
    expect(accessGroup).toMatchObject({ scope: 'USER', userId: world.user.user.id });
    for (const listed of (await get('/me/access-groups')).data)
      expectModels('listed access group', listed, models.ACCESS_GROUP);
    const resource = await get(`/me/access-groups/${ids.accessGroupId}/resources/${ids.sharedResourceId}`);
    expectModels('shared resource', resource, models.SHARED_RESOURCE);
    expect(resource).toMatchObject({ type: 'PROJECT', resourceId: ids.projectId });
    const seen = await world.member.call('GET', `/api/v2/me/projects/${ids.projectId}`, { json: true });
    expect(seen.status).toBe(200);
    expectModels('shared project', seen.body, models.PROJECT, models.JAVA_PROJECT);
    expect(seen.body).toMatchObject({ sharedWithCaller: true, sharedById: world.user.user.id });
    expect(notWellFormed((await world.member.call('GET', `/api/v2/me/projects/${ids.projectId}`)).text)).toBeNull();
    for (const path of [
      `/me/access-groups/${ids.accessGroupId}/users`,
      `/me/access-groups/${ids.accessGroupId}/resources`,
    ])
      await xml(path);

    // Files and their properties.
    const file = await get(`/me/files/${app.id}`);
    expectModels('file', file, models.USER_FILE);
    expect(file).toMatchObject({ userId: world.user.user.id, userEmail: world.user.user.email, shared: false });
    expect(file.fileProperties.length).toBeGreaterThan(0);
    for (const property of file.fileProperties) expectModels('file property', property, models.FILE_PROPERTY);

    // Frameworks: extensions as strings, forProjects a boolean.
    const frameworks = await get('/me/available-frameworks');
    for (const framework of frameworks.data)
      expectModels('framework', framework, models.FRAMEWORK, models.JAVA_FRAMEWORK);
    const appium = frameworks.data.find((framework: { id: number }) => framework.id === 4);
    expect(appium).toMatchObject({ requiredAppExtensions: 'apk', forProjects: true });

    // The legacy project config.
    expectModels('project config', await get(`/me/projects/${ids.projectId}/config`), models.PROJECT_CONFIG);

    // The account pages: a subscription, the preferences, the statistics and the device usage.
    const notifications = await get('/me/notifications');
    expect(notifications.data.length).toBeGreaterThan(0);
    for (const listed of notifications.data) expectModels('notification', listed, models.NOTIFICATION);
    for (const path of ['/me/notifications/scopes', '/me/notifications/channels'])
      for (const item of (await get(path)).data) expectModels(path, item, models.ENUM);
    expectModels('preferences', await get('/me/preferences'), models.USER_PREFERENCE);
    const properties = await get('/properties');
    expect(properties.data.length).toBeGreaterThan(0);
    for (const listed of properties.data) {
      expectModels('property', listed, models.PROPERTY);
      // Every field set, so that each type above is checked rather than passed as null.
      expect(Object.keys(models.PROPERTY.fields).filter((field) => listed[field] === null)).toEqual([]);
    }
    expectModels('statistics', await get('/me/statistics'), models.USER_STATISTICS);
    const usage = await get('/me/device-usage');
    expect(usage.data.length).toBeGreaterThan(0);
    for (const listed of usage.data) {
      expectModels('device usage', listed, models.DEVICE_USAGE);
      expectModels('device usage device', listed.device, models.DEVICE);
    }

    // XML: the same records stay well-formed, with the new fields as elements.
    const meXml = await xml('/me');
    expect(meXml).toContain('<address>Street 1 &amp; 2</address>');
    expect(meXml).toContain('<state>North &lt;Ostrobothnia&gt;</state>');
    expect(meXml).toContain(`<mainUserId>${me.id}</mainUserId>`);
    const frameworksXml = await xml('/me/available-frameworks');
    expect(frameworksXml).toContain('<requiredAppExtensions>apk</requiredAppExtensions>');
    expect(frameworksXml).toContain('<forProjects>true</forProjects>');
    expect(await xml(`/me/projects/${ids.projectId}/runs/${run.id}`)).toMatch(
      new RegExp(
        `<config>.*<maxTestTimeout><unit>SECONDS</unit><value>${maxTimeout}</value></maxTestTimeout>.*</config>`,
        's',
      ),
    );
    expect(await xml(`/me/projects/${ids.projectId}/runs/${run.id}/config`)).toContain('<apiTestRunConfig>');
    expect(await xml(`/me/projects/${ids.projectId}/runs/${run.id}/device-sessions`)).toContain(
      `<projectName>${read.projectName}</projectName>`,
    );
    for (const path of [
      '/me/projects',
      `/me/files/${app.id}`,
      `/me/device-groups/${ids.groupId}`,
      `/me/device-sessions/${ids.deviceSessionId}/screenshots`,
      `/me/device-sessions/${session}/test-case-runs`,
      `/me/device-sessions/${session}/steps`,
      `/me/projects/${ids.projectId}/config`,
      '/me/runs/config',
      '/me/notifications',
      '/me/statistics',
      '/me/device-usage',
      '/enums',
    ])
      await xml(path);
  }, 120_000);
});
