/**
 * A user's runs and device sessions across all their projects (`/me/runs`, `/me/device-sessions`,
 * and as `/users/{id}/...`), with the list grammar, and the TestRunConfig defaults
 * (`/me/runs/config`, `/runs/config`). A user sees only their own, whatever they filter or search.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Device } from '../../src/domain/devices.ts';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, parseXml } from '../support/harness.ts';

describe.each(ENGINES)("a user's runs and device sessions (%s)", (engine) => {
  let h: Harness;
  let alice: TestUser;
  let bob: TestUser;
  let devices: Device[];
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    bob = await h.user({ plan: 'SILVER' });
    devices = [await fixtures.device(h.ctx, 'Pixel 8'), await fixtures.device(h.ctx, 'Galaxy S24')];
    const project = async (who: TestUser, name: string) =>
      (await who.call('POST', '/api/me/projects', { json: true, form: { name } })).body.id as number;
    ids.alpha = await project(alice, 'Alpha');
    ids.beta = await project(alice, 'Beta');
    ids.bobs = await project(bob, 'Bobs');
    ids.first = (await fixtures.run(h.ctx, alice.user, ids.alpha, devices, ['SUCCEEDED', 'FAILED'])).id;
    h.advance(1000);
    ids.second = (await fixtures.run(h.ctx, alice.user, ids.beta, devices, ['WAITING'], { name: 'Nightly' })).id;
    h.advance(1000);
    ids.third = (await fixtures.run(h.ctx, alice.user, ids.alpha, devices, ['RUNNING', 'EXCLUDED'])).id;
    h.advance(1000);
    ids.bobsRun = (await fixtures.run(h.ctx, bob.user, ids.bobs, devices, ['SUCCEEDED'], { name: 'Alpha' })).id;
  });
  afterAll(async () => h?.close());

  const get = (who: TestUser, url: string) => who.call('GET', url, { json: true });
  /** The record without its position in the list it came in (docs/api.md#fields-of-the-records). */
  const atOwnRow = (item: Record<string, unknown>) => ({ ...item, rowIndex: null });
  const idsOf = (answer: { body: { data: Array<{ id: number }> } }) => answer.body.data.map((item) => item.id);

  it("lists the user's runs of every project, newest first, as a project's list shows them", async () => {
    const answer = await get(alice, '/api/v2/me/runs');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ selfURI: '/me/runs', total: 3, offset: 0, limit: 20, empty: false });
    expect(idsOf(answer)).toEqual([ids.third, ids.second, ids.first]);
    const inProject = await get(alice, `/api/v2/me/projects/${ids.alpha}/runs`);
    for (const item of inProject.body.data)
      expect(atOwnRow(answer.body.data.find((run: { id: number }) => run.id === item.id))).toEqual(atOwnRow(item));
    const [, nightly] = answer.body.data;
    expect(nightly).toMatchObject({ displayName: 'Nightly', projectId: ids.beta, projectName: 'Beta' });

    const alias = await get(alice, `/api/users/${alice.user.id}/runs`);
    expect(alias.status).toBe(200);
    expect(idsOf(alias)).toEqual(idsOf(answer));
    expect(alias.body.selfURI).toBe(`/users/${alice.user.id}/runs`);
  });

  it("takes the list grammar on the runs' fields, and refuses unknown ones", async () => {
    const cases: Array<[string, number[]]> = [
      [`filter=projectId_eq_${ids.alpha}`, [ids.third, ids.first]],
      ['filter=s_projectName_eq_Beta', [ids.second]],
      ['filter=displayName_contains_night', [ids.second]],
      ['filter=state_eq_FINISHED', [ids.first]],
      [`filter=n_projectId_eq_${ids.alpha};state_in_RUNNING|WAITING`, [ids.third]],
      ['sort=createTime_a', [ids.first, ids.second, ids.third]],
      ['sort=projectName_d:createTime_a', [ids.second, ids.first, ids.third]],
      ['search=beta', [ids.second]],
      ['search=Test Run', [ids.third, ids.first]],
      ['limit=1&offset=1', [ids.second]],
      ['sort=deviceCount_a:createTime_a', [ids.second, ids.first, ids.third]],
      ['sort=executionRatio_d', [ids.first, ids.third, ids.second]],
      ['filter=successRatio_eq_0', [ids.third, ids.second]],
      ['filter=deviceCount_gt_1;frameworkName_isnull', [ids.third, ids.first]],
      [`filter=userId_eq_${alice.user.id}&limit=2`, [ids.third, ids.second]],
      // What the public clients also send, for what we do not have (sharing, properties): no effect.
      ['forWholeAccount=false&skipCommonProject=false&skipShared=false&limit=1', [ids.third]],
    ];
    for (const [query, expected] of cases) {
      const answer = await get(alice, `/api/v2/me/runs?${query}`);
      expect(answer.status, query).toBe(200);
      expect(idsOf(answer), query).toEqual(expected);
    }
    const paged = await get(alice, '/api/v2/me/runs?limit=1&filter=projectId_eq_' + ids.alpha);
    expect(paged.body.total).toBe(2);
    expect(paged.body.next).toContain(`/api/v2/me/runs?offset=1&limit=1&filter=projectId_eq_${ids.alpha}`);
    for (const query of ['filter=nosuch_eq_1', 'sort=nosuch_a', 'filter=state_eq_DONE', 'limit=-1']) {
      const answer = await get(alice, `/api/v2/me/runs?${query}`);
      expect(answer.status, query).toBe(400);
    }
  });

  it("lists the user's current device sessions of every run, newest first, as a run's list shows them", async () => {
    const answer = await get(alice, '/api/v2/me/device-sessions?limit=0');
    expect(answer.status).toBe(200);
    expect(answer.body.total).toBe(5);
    const listed = idsOf(answer);
    expect(listed).toEqual([...listed].sort((a, b) => b - a));
    const ofRun = await get(alice, `/api/v2/me/projects/${ids.alpha}/runs/${ids.first}/device-sessions`);
    expect(ofRun.body.total).toBe(2);
    for (const item of ofRun.body.data)
      expect(atOwnRow(answer.body.data.find((session: { id: number }) => session.id === item.id))).toEqual(
        atOwnRow(item),
      );

    const cases: Array<[string, number]> = [
      [`filter=testRunId_eq_${ids.first}`, 2],
      [`filter=projectId_eq_${ids.beta}`, 1],
      ['filter=state_eq_EXCLUDED', 1],
      ['filter=excludeReason_isnotnull', 1],
      ['filter=retryState_eq_NONE', 5],
      [`filter=deviceId_eq_${devices[1]!.id}`, 2],
      ['filter=deviceName_like_galaxy%', 2],
      ['search=pixel', 3],
      ['sort=deviceName_a:id_a&limit=1', 5],
      ['filter=successRatio_eq_0', 5],
      [`filter=userId_eq_${alice.user.id}`, 5],
      ['withProperties=true', 5],
    ];
    for (const [query, total] of cases) {
      const page = await get(alice, `/api/v2/me/device-sessions?${query}`);
      expect(page.status, query).toBe(200);
      expect(page.body.total, query).toBe(total);
    }
    const byName = await get(alice, '/api/v2/me/device-sessions?sort=deviceName_a:id_a&limit=1');
    expect(byName.body.data[0].device.displayName).toBe('Galaxy S24');
    for (const query of ['filter=nosuch_eq_1', 'sort=superseded_a', 'filter=retryState_eq_SOMETIMES']) {
      const page = await get(alice, `/api/v2/me/device-sessions?${query}`);
      expect(page.status, query).toBe(400);
    }
  });

  it('answers the TestRunConfig defaults at every path, with the plan’s longest timeout', async () => {
    for (const url of ['/api/v2/me/runs/config', '/api/runs/config', `/api/v2/users/${alice.user.id}/runs/config`]) {
      const answer = await get(alice, url);
      expect(answer.status, url).toBe(200);
      expect(answer.body, url).toMatchObject({
        id: null,
        selfURI: null,
        testRunId: null,
        osType: null,
        frameworkId: null,
        projectId: null,
        projectName: null,
        deviceGroupId: null,
        deviceIds: [],
        files: [],
        testRunName: null,
        timeout: 600,
        testRunParameters: [],
        scheduler: 'PARALLEL',
        hookURL: null,
        maxAutoRetriesCount: 0,
        deviceLanguageCode: 'en_US',
        limitationType: null,
        limitationValue: null,
        instrumentationRunner: null,
        withAnnotation: null,
        withoutAnnotation: null,
        applicationUsername: null,
        launchApp: true,
        runAvailable: false,
        computedDevices: [],
        excludedDevices: [],
        maxTestTimeout: { unit: 'SECONDS', value: 3600 },
      });
    }
    expect((await get(bob, '/api/v2/me/runs/config')).body.maxTestTimeout.value).toBe(1800);
    const xml = await alice.call('GET', '/api/v2/me/runs/config');
    expect(xml.status).toBe(200);
    const config = parseXml(xml.text).apiTestRunConfig;
    expect(config).toMatchObject({ scheduler: 'PARALLEL', timeout: '600', runAvailable: 'false' });
    expect(config.osType).toBeUndefined();
  });

  it('answers XML too', async () => {
    const runs = await alice.call('GET', '/api/me/runs', { headers: { accept: 'application/xml' } });
    expect(runs.status).toBe(200);
    expect(parseXml(runs.text).apiList.data.apiTestRun.map((run: { id: string }) => Number(run.id))).toEqual([
      ids.third,
      ids.second,
      ids.first,
    ]);
    const sessions = await alice.call('GET', '/api/me/device-sessions?limit=2');
    expect(parseXml(sessions.text).apiList.data.apiDeviceSession).toHaveLength(2);
    expect(parseXml(sessions.text).apiList.total).toBe('5');
  });

  it("never shows another user's runs or sessions, whatever they filter or search", async () => {
    const aliceRuns = [ids.first, ids.second, ids.third];
    const [aliceSession] = await h.ctx.store.deviceRuns.ofRuns([ids.first]);
    const own = await get(bob, '/api/v2/me/runs');
    expect(idsOf(own)).toEqual([ids.bobsRun]);
    for (const query of [
      `filter=projectId_eq_${ids.alpha}`,
      `filter=id_in_${aliceRuns.join('|')}`,
      'filter=projectName_eq_Alpha',
      'search=Alpha',
      'search=Nightly',
      `filter=startedById_eq_${alice.user.id}`,
      'limit=0',
    ]) {
      for (const base of ['/api/v2/me/runs', `/api/users/${bob.user.id}/runs`]) {
        const answer = await get(bob, `${base}?${query}`);
        expect(answer.status, query).toBe(200);
        for (const id of idsOf(answer)) expect(aliceRuns, `${base}?${query}`).not.toContain(id);
        expect(answer.text).not.toContain('Beta');
      }
    }
    for (const query of [
      `filter=testRunId_eq_${ids.first}`,
      `filter=id_eq_${aliceSession!.id}`,
      `filter=projectId_in_${ids.alpha}|${ids.beta}`,
      'search=Galaxy',
      'limit=0',
    ]) {
      const answer = await get(bob, `/api/v2/me/device-sessions?${query}`);
      expect(answer.status, query).toBe(200);
      for (const session of answer.body.data) expect(session.testRunId, query).toBe(ids.bobsRun);
    }
    for (const url of [
      `/api/v2/users/${alice.user.id}/runs`,
      `/api/users/${alice.user.id}/runs?filter=projectId_eq_${ids.alpha}`,
      `/api/v2/users/${alice.user.id}/device-sessions`,
      `/api/v2/users/${alice.user.id}/runs/config`,
    ]) {
      const answer = await get(bob, url);
      expect(answer.status, url).toBe(404);
      expect(answer.text).not.toContain('Alpha');
    }
  });

  // Last: it changes the world the others read.
  it('leaves out device sessions a retry replaced; they stay reachable by id', async () => {
    const [replaced] = await h.ctx.store.deviceRuns.ofRuns([ids.first]);
    await h.ctx.store.deviceRuns.markSuperseded(replaced!.id);
    const answer = await get(alice, '/api/v2/me/device-sessions?limit=0');
    expect(answer.body.total).toBe(4);
    expect(idsOf(answer)).not.toContain(replaced!.id);
    const filtered = await get(alice, `/api/v2/me/device-sessions?filter=id_eq_${replaced!.id}`);
    expect(filtered.body.total).toBe(0);
    expect((await get(alice, `/api/v2/me/device-sessions/${replaced!.id}`)).status).toBe(200);
  });
});
