/** docs/api.md#the-run-in-cloud-ide-plug-in: the run-in-cloud IDE plug-in identifies itself and may not start the iOS crawler. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOS_CRAWLER_ID } from '../../src/domain/frameworks.ts';
import { type FakeAgent, androidDevice, fakeAgent, iosDevice } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

const ANDROID_CRAWLER = 6;

describe('the run-in-cloud IDE plug-in', () => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let ipa: { id: number };
  let apk: { id: number };
  beforeAll(async () => {
    h = await createHarness('sqlite');
    alice = await h.user();
    agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1'), iosDevice('i1')]);
    await agent.cleanAll();
    ipa = await fixtures.file(h.ctx, alice.user, { name: 'app.ipa', inputType: 'APPLICATION', osType: 'IOS' });
    apk = await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example' },
    });
  });
  afterAll(async () => h.close());

  const fromPlugin: Record<string, string>[] = [
    { 'x-devicecloud-client': 'run-in-cloud-ide/3.2' },
    { 'user-agent': 'AndroidStudio/2024.1 (run-in-cloud-ide/3.2; Linux)' },
  ];
  const iosCrawler = () => ({
    frameworkId: IOS_CRAWLER_ID,
    projectName: 'iOS',
    files: [{ id: ipa.id }],
    deviceIds: [agent.deviceIds.get('i1')],
  });

  it('is refused the iOS crawler, told where to start it instead, whichever way it says who it is', async () => {
    for (const headers of fromPlugin) {
      for (const path of ['/api/v2/runs', '/api/me/runs/config']) {
        const refused = await alice.call('POST', path, { json: true, body: iosCrawler(), headers });
        expect(refused.status).toBe(403);
        expect(refused.body.message).toContain('run-in-cloud IDE plug-in');
        expect(refused.body.message).toContain('web dashboard');
      }
    }
    expect((await alice.call('GET', '/api/me/projects', { json: true })).body.total).toBe(0);
  });

  it('is refused the legacy crawler start too (project config mode IOS_CRAWLER)', async () => {
    const project = (
      await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'iOS app', type: 'IOS' } })
    ).body.id;
    const groups = await alice.call('GET', '/api/me/device-groups?withPublic=true', { json: true });
    const iosGroup = groups.body.data.find((g: { osType: string }) => g.osType === 'IOS').id;
    await alice.call('POST', `/api/v2/projects/${project}/config`, {
      json: true,
      form: { mode: 'IOS_CRAWLER', usedDeviceGroupId: String(iosGroup) },
    });
    await h.ctx.store.files.insert({
      ...(await h.ctx.store.files.findOwned(alice.user.id, ipa.id))!,
      projectId: project,
      projectSlot: 'application',
    });
    const refused = await alice.call('POST', '/api/v2/runs', {
      json: true,
      form: { projectId: String(project) },
      headers: fromPlugin[0],
    });
    expect(refused.status).toBe(403);
    expect(
      (await alice.call('POST', '/api/v2/runs', { json: true, form: { projectId: String(project) } })).status,
    ).toBe(201);
  });

  it('starts anything else, and other clients start the iOS crawler', async () => {
    const android = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: {
        frameworkId: ANDROID_CRAWLER,
        projectName: 'Android',
        files: [{ id: apk.id }],
        deviceIds: [agent.deviceIds.get('a1')],
      },
      headers: fromPlugin[0],
    });
    expect(android.status, android.text).toBe(201);
    const api = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: iosCrawler(),
      headers: { 'user-agent': 'testdroid-api-client/2.9 (Java)' },
    });
    expect(api.status, api.text).toBe(201);
  });
});
