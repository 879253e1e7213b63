/**
 * The lists held in memory take the list grammar (docs/api.md#lists) as the clients send it: the
 * frameworks by OS, a session's output files through the JS client's images() and
 * nonMediaFiles() filters, screenshots, test case runs and a group's devices; and a filter never
 * opens another user's list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRAMEWORKS } from '../../src/domain/frameworks.ts';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, parseXml } from '../support/harness.ts';

/** The filters of bitbar/cloud-api-client-js (src/api/class/Images.filter.ts, NonMedia.filter.ts). */
const IMAGES = [
  'state_eq_READY',
  'mimetype_in_image/png|image/jpg|image/jpeg|image/webp|image/gif',
  'name_notlike_action-%%',
].join(';');
const NON_MEDIA = [
  'state_eq_READY',
  'mimetype_notin_image/png|image/jpg|image/jpeg|image/webp|image/gif|video/mp4|video/avi|video/webm|video/ogg|video/mpeg',
].join(';');

describe.each(ENGINES)('lists held in memory take the list grammar (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let mallory: TestUser;
  let session: number;
  let runId: number;
  let groupId: number;
  const names = new Map<number, string>();

  beforeAll(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    mallory = await h.user();
    const devices = [
      await fixtures.device(h.ctx, 'Pixel 8'),
      await fixtures.device(h.ctx, 'Moto G'),
      await fixtures.device(h.ctx, 'galaxy S24'),
    ];
    const project = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'P' } })).body.id;
    const run = await fixtures.run(h.ctx, alice.user, project, devices, ['SUCCEEDED']);
    runId = run.id;
    session = (await h.ctx.store.deviceRuns.ofRuns([run.id]))[0]!.id;
    const outputs: Array<[string, string, string[]]> = [
      ['screen-1.png', 'image/png', ['screenshot']],
      ['screen-2.jpg', 'image/jpeg', ['screenshot']],
      ['action-tap.png', 'image/png', []],
      ['video.mp4', 'video/mp4', ['video']],
      ['logcat.txt', 'text/plain', []],
      ['results.xml', 'application/xml', []],
    ];
    for (const [name, mimetype, tags] of outputs) {
      h.advance(1000);
      const file = await fixtures.file(h.ctx, alice.user, {
        name,
        inputType: 'DATA',
        outputOf: session,
        tags,
        mimetype,
      });
      names.set(file.id, name);
    }
    await h.ctx.store.results.insertTestCases(session, [
      {
        suiteName: 'S',
        className: 'a.Login',
        methodName: 'signsIn',
        duration: 5,
        result: 'PASSED',
        errorMessage: null,
        stacktrace: null,
      },
      {
        suiteName: 'S',
        className: 'a.Login',
        methodName: 'refusesBadPassword',
        duration: 9,
        result: 'FAILED',
        errorMessage: 'x',
        stacktrace: 'y',
      },
      {
        suiteName: 'S',
        className: 'a.Cart',
        methodName: 'addsItem',
        duration: 7,
        result: 'SKIPPED',
        errorMessage: null,
        stacktrace: null,
      },
    ]);
    groupId = (
      await alice.call('POST', '/api/me/device-groups', {
        json: true,
        form: { displayName: 'Mine', osType: 'ANDROID' },
      })
    ).body.id;
    for (const device of devices)
      await alice.call('POST', `/api/me/device-groups/${groupId}/devices`, { form: { deviceId: String(device.id) } });
  });
  afterAll(async () => h?.close());

  const get = (who: TestUser, url: string, params: Record<string, string> = {}) =>
    who.call('GET', `${url}?${new URLSearchParams(params)}`, { json: true });
  const fileNames = (answer: { body: { data: Array<{ name: string }> } }) => answer.body.data.map((item) => item.name);

  it('lists the frameworks of one OS, and refuses a field frameworks do not have', async () => {
    const android = await get(alice, '/api/v2/me/available-frameworks', { filter: 's_osType_eq_ANDROID' });
    expect(android.status).toBe(200);
    const expected = FRAMEWORKS.filter((framework) => framework.osType === 'ANDROID');
    expect(android.body.total).toBe(expected.length);
    expect(android.body.total).toBeLessThan(FRAMEWORKS.length);
    expect(new Set(android.body.data.map((item: { osType: string }) => item.osType))).toEqual(new Set(['ANDROID']));

    const page = await get(alice, '/api/v2/me/available-frameworks', { limit: '2', offset: '1', sort: 'name_d' });
    const byName = [...FRAMEWORKS].sort((a, b) => b.name.toLowerCase().localeCompare(a.name.toLowerCase()));
    expect(page.body.data.map((item: { id: number }) => item.id)).toEqual(byName.slice(1, 3).map((f) => f.id));
    expect(page.body.next).toContain('offset=3');
    expect(page.body.next).toContain('sort=name_d');

    const xml = await alice.call('GET', '/api/v2/me/available-frameworks?filter=s_color_eq_red');
    expect(xml.status).toBe(400);
    expect(parseXml(xml.text).apiExceptionMessage.message).toContain("Unknown filter field 'color' for frameworks");
  });

  it("answers the JS client's images() and nonMediaFiles() on a session's output files", async () => {
    const files = `/api/v2/me/device-sessions/${session}/output-file-set/files`;
    const images = await get(alice, files, { filter: IMAGES });
    expect(images.status, images.text).toBe(200);
    expect(fileNames(images)).toEqual(['screen-1.png', 'screen-2.jpg']);
    const nonMedia = await get(alice, files, { filter: NON_MEDIA });
    expect(fileNames(nonMedia)).toEqual(['logcat.txt', 'results.xml']);
    // videos(): a tag and a filter together; the page links repeat both.
    const videos = await alice.call('GET', `${files}?filter=s_state_eq_READY&tag[]=video&limit=1`, { json: true });
    expect(fileNames(videos)).toEqual(['video.mp4']);
    const twoTags = await alice.call('GET', `${files}?tag=video&tag=screenshot&limit=1&sort=name_a`, { json: true });
    expect(twoTags.body.total).toBe(3);
    expect(new URL(twoTags.body.next).searchParams.getAll('tag')).toEqual(['video', 'screenshot']);
    const newest = await get(alice, files, { sort: 'createTime_d', limit: '2' });
    expect(fileNames(newest)).toEqual(['results.xml', 'logcat.txt']);
  });

  it('filters, sorts and pages screenshots and test case runs', async () => {
    const base = `/api/v2/me/device-sessions/${session}`;
    const jpg = await get(alice, `${base}/screenshots`, { filter: 'originalName_like_%.jpg' });
    expect(jpg.body.data.map((item: { originalName: string }) => item.originalName)).toEqual(['screen-2.jpg']);
    const newest = await get(alice, `${base}/screenshots`, { sort: 'createTime_d', limit: '1' });
    expect(newest.body).toMatchObject({ total: 2, limit: 1 });
    expect(newest.body.data[0].originalName).toBe('screen-2.jpg');

    const failed = await get(alice, `${base}/test-case-runs`, {
      filter: 'result_in_FAILED|SKIPPED',
      sort: 'methodName_a',
    });
    expect(failed.body.data.map((item: { methodName: string }) => item.methodName)).toEqual([
      'addsItem',
      'refusesBadPassword',
    ]);
    const login = await get(alice, `${base}/test-case-runs`, { search: 'SIGNS' });
    expect(login.body.data.map((item: { methodName: string }) => item.methodName)).toEqual(['signsIn']);
    const legacy = await get(alice, `/api/v2/me/runs/${runId}/device-runs/${session}/test-case-runs`, {
      filter: 'n_duration_gt_6',
    });
    expect(legacy.body.total).toBe(2);
  });

  it("filters, sorts and pages a group's devices", async () => {
    const url = `/api/v2/me/device-groups/${groupId}/devices`;
    const notMoto = await get(alice, url, {
      filter: 'osType_eq_ANDROID;displayName_notlike_moto%',
      sort: 'displayName_d',
    });
    expect(notMoto.body.data.map((item: { displayName: string }) => item.displayName)).toEqual([
      'Pixel 8',
      'galaxy S24',
    ]);
    const page = await get(alice, url, { limit: '1', offset: '1' });
    expect(page.body).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.body.data[0].displayName).toBe('Moto G');
    const search = await get(alice, url, { search: 'GALAXY' });
    expect(search.body.data.map((item: { displayName: string }) => item.displayName)).toEqual(['galaxy S24']);
    expect((await get(alice, url, { filter: 'softwareVersion_eq_1' })).status).toBe(400);
  });

  it("never opens another user's list, whatever the filter", async () => {
    for (const url of [
      `/api/v2/me/device-groups/${groupId}/devices`,
      `/api/v2/device-groups/${groupId}/devices`,
      `/api/v2/me/device-sessions/${session}/output-file-set/files`,
      `/api/v2/device-sessions/${session}/screenshots`,
      `/api/v2/device-sessions/${session}/test-case-runs`,
    ]) {
      const variants: Array<Record<string, string>> = [{}, { filter: 'id_isnotnull' }, { limit: '0', search: 'a' }];
      for (const params of variants) {
        const answer = await get(mallory, url, params);
        expect(answer.status, `${url} ${JSON.stringify(params)}`).toBe(404);
        expect(answer.text).not.toContain('screen-1');
        expect(answer.text).not.toContain('Pixel');
      }
    }
  });
});
