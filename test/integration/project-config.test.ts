import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, parseXml } from '../support/harness.ts';

describe.each(ENGINES)('project config (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  beforeEach(async () => {
    h = await createHarness(engine);
    alice = await h.user({ plan: 'GOLD' });
  });
  afterEach(async () => h.close());

  async function project(type: string) {
    return (await alice.call('POST', '/api/me/projects', { json: true, form: { name: type, type } })).body.id as number;
  }

  it("follows the seed's iOS crawler recipe: IOS project, mode IOS_CRAWLER, a device group", async () => {
    const iphone = await fixtures.device(h.ctx, 'iPhone 15', 'IOS');
    const group = await fixtures.publicGroup(h.ctx, 'iOS phones', [iphone], 'IOS');
    const id = await project('IOS');
    const initial = await alice.call('GET', `/api/v2/projects/${id}/config`, { json: true });
    expect(initial.status).toBe(200);
    expect(initial.body).toMatchObject({
      id,
      projectId: id,
      mode: 'IOS',
      usedDeviceGroupId: null,
      runAvailable: false,
      scheduler: 'PARALLEL',
      timeout: 600,
    });

    const changed = await alice.call('POST', `/api/v2/projects/${id}/config`, {
      json: true,
      form: { mode: 'IOS_CRAWLER', usedDeviceGroupId: String(group.id) },
    });
    expect(changed.status).toBe(201);
    expect(changed.body).toMatchObject({
      mode: 'IOS_CRAWLER',
      usedDeviceGroupId: group.id,
      usedDeviceGroupName: 'iOS phones',
      runAvailable: true,
    });
    const reread = parseXml((await alice.call('GET', `/api/me/projects/${id}/config`)).text);
    expect(reread.apiProjectConfig).toMatchObject({ mode: 'IOS_CRAWLER', usedDeviceGroupId: String(group.id) });
  });

  it('takes parameters in the query string and changes the other fields', async () => {
    const id = await project('ANDROID');
    const answer = await alice.call(
      'POST',
      `/api/v2/projects/${id}/config?timeout=1200&scheduler=SERIAL&deviceLanguageCode=fi_FI&hookURL=https://ci.example.com/h&maxAutoRetriesCount=2&autoScreenshots=true`,
      { json: true },
    );
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      timeout: 1200,
      scheduler: 'SERIAL',
      deviceLanguageCode: 'fi_FI',
      hookURL: 'https://ci.example.com/h',
      maxAutoRetriesCount: 2,
      autoScreenshots: true,
    });
  });

  it('refuses IOS_CRAWLER outside IOS projects, unknown modes, and too long timeouts, saving nothing', async () => {
    const id = await project('ANDROID');
    const crawler = await alice.call('POST', `/api/v2/projects/${id}/config`, {
      json: true,
      form: { mode: 'IOS_CRAWLER' },
    });
    expect(crawler.status).toBe(400);
    expect(crawler.body.message).toContain('IOS_CRAWLER needs a project of type IOS');
    const unknown = await alice.call('POST', `/api/v2/projects/${id}/config`, {
      form: { mode: 'NOPE', timeout: '100' },
    });
    expect(unknown.status).toBe(400);
    expect(parseXml(unknown.text).apiExceptionMessage.message).toMatch(
      /'mode' must be one of FULL_RUN, IOS, APP_CRAWLER, IOS_CRAWLER/,
    );
    const tooLong = await alice.call('POST', `/api/v2/projects/${id}/config`, {
      json: true,
      form: { timeout: '3601' },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.message).toContain("'timeout' must be an integer between 1 and 3600");
    const after = await alice.call('GET', `/api/v2/projects/${id}/config`, { json: true });
    expect(after.body).toMatchObject({ mode: 'FULL_RUN', timeout: 600 });
  });

  it("answers 404 for a device group the user cannot use, and accepts the user's own", async () => {
    const bob = await h.user();
    const bobsGroup = (
      await bob.call('POST', '/api/me/device-groups', { json: true, form: { displayName: 'Bob', osType: 'ANDROID' } })
    ).body.id;
    const id = await project('ANDROID');
    const foreign = await alice.call('POST', `/api/v2/projects/${id}/config`, {
      json: true,
      form: { usedDeviceGroupId: String(bobsGroup) },
    });
    expect(foreign.status).toBe(404);
    expect(
      (await alice.call('POST', `/api/v2/projects/${id}/config`, { json: true, form: { usedDeviceGroupId: '999999' } }))
        .status,
    ).toBe(404);
    const own = (
      await alice.call('POST', '/api/me/device-groups', {
        json: true,
        form: { displayName: 'Mine', osType: 'ANDROID' },
      })
    ).body.id;
    const ok = await alice.call('POST', `/api/v2/projects/${id}/config`, {
      json: true,
      form: { usedDeviceGroupId: String(own) },
    });
    expect(ok.body).toMatchObject({ usedDeviceGroupId: own, usedDeviceGroupName: 'Mine' });
    expect((await alice.call('DELETE', `/api/me/device-groups/${own}`)).status).toBe(204);
    const cleared = await alice.call('GET', `/api/v2/projects/${id}/config`, { json: true });
    expect(cleared.body).toMatchObject({ usedDeviceGroupId: null, runAvailable: false });
  });

  it('keeps key/value parameters', async () => {
    const id = await project('ANDROID');
    const added = await alice.call('POST', `/api/me/projects/${id}/config/parameters`, {
      json: true,
      form: { key: 'API_URL', value: 'https://staging' },
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ key: 'API_URL', value: 'https://staging' });
    const bad = await alice.call('POST', `/api/me/projects/${id}/config/parameters`, {
      json: true,
      form: { key: '1 bad key', value: 'x' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("'key'");
    const listed = await alice.call('GET', `/api/v2/projects/${id}/config/parameters`, { json: true });
    expect(listed.body).toMatchObject({ total: 1, data: [{ id: added.body.id, key: 'API_URL' }] });
    expect((await alice.call('DELETE', `/api/me/projects/${id}/config/parameters/${added.body.id}`)).status).toBe(204);
    expect((await alice.call('DELETE', `/api/me/projects/${id}/config/parameters/${added.body.id}`)).status).toBe(404);
  });
});
