/**
 * The fields the stored lists compute rather than hold (a project's figures and sharing flags, a
 * run's per-state counters, a device group's device count and owner) take the list grammar in SQL
 * (docs/api.md#lists), with the values the records show. Computed from the caller's side, they
 * never reach another user's rows: a filter on them finds only what the caller may list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

type Item = Record<string, unknown> & { id: number };

describe.each(ENGINES)('computed list fields (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let bob: TestUser;
  let dave: TestUser;
  const ids: Record<string, number> = {};

  const form = (values: Record<string, string>) => ({ json: true, form: values });
  const get = (who: TestUser, url: string) => who.call('GET', url, { json: true });
  const idsOf = async (who: TestUser, url: string) => {
    const answer = await get(who, url);
    expect(answer.status, `${url}: ${answer.text}`).toBe(200);
    return (answer.body.data as Item[]).map((item) => item.id);
  };

  beforeAll(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    bob = await h.user();
    dave = await h.user();
    const devices = [await fixtures.device(h.ctx, 'Pixel 8'), await fixtures.device(h.ctx, 'Galaxy S24')];
    const project = async (who: TestUser, name: string) =>
      (await who.call('POST', '/api/me/projects', form({ name }))).body.id as number;
    ids.good = await project(alice, 'Mostly green');
    ids.empty = await project(alice, 'Untouched');
    ids.bobs = await project(bob, 'Bobs');
    ids.green = (await fixtures.run(h.ctx, alice.user, ids.good, devices, ['SUCCEEDED', 'SUCCEEDED'])).id;
    h.advance(1000);
    ids.mixed = (
      await fixtures.run(h.ctx, alice.user, ids.good, devices, ['SUCCEEDED', 'FAILED'], {
        testCases: { passed: 2, failed: 1 },
      })
    ).id;
    h.advance(1000);
    ids.bobsRun = (await fixtures.run(h.ctx, bob.user, ids.bobs, devices, ['FAILED', 'RUNNING'])).id;
    await alice.call('POST', `/api/me/projects/${ids.good}/share`, form({ email: bob.user.email }));
    ids.group = (
      await alice.call('POST', '/api/me/device-groups', form({ displayName: 'Two phones', osType: 'ANDROID' }))
    ).body.id;
    for (const device of devices)
      await alice.call('POST', `/api/me/device-groups/${ids.group}/devices`, form({ deviceId: String(device.id) }));
    ids.bobsGroup = (
      await bob.call('POST', '/api/me/device-groups', form({ displayName: 'Empty', osType: 'ANDROID' }))
    ).body.id;
    await alice.call('POST', `/api/device-groups/${ids.group}/share`, form({ email: bob.user.email }));
  });
  afterAll(async () => h?.close());

  it('filters and sorts projects on their figures, with fractions for ratios (3 of 4 device runs succeeded)', async () => {
    const cases: Array<[string, number[]]> = [
      ['filter=n_successRatio_gt_0.5', [ids.good]],
      ['filter=successRatio_eq_0.75', [ids.good]],
      ['filter=successRatio_lt_0.5', [ids.empty]],
      ['filter=testRunCount_eq_2', [ids.good]],
      ['sort=testRunCount_a', [ids.empty, ids.good]],
      ['sort=n_successRatio_d', [ids.good, ids.empty]],
      [`filter=userEmail_eq_${alice.user.email}&sort=id_a`, [ids.good, ids.empty]],
      ['filter=shared_eq_true', [ids.good]],
      ['filter=sharedWithCaller_eq_true', []],
      ['filter=common_eq_false;readOnly_eq_false;archivingItemCount_gt_0&sort=id_a', [ids.good, ids.empty]],
    ];
    for (const [query, expected] of cases)
      expect(await idsOf(alice, `/api/v2/me/projects?${query}`), query).toEqual(expected);
    const [shown] = (await get(alice, `/api/v2/me/projects?filter=id_eq_${ids.good}`)).body.data as Item[];
    expect(shown).toMatchObject({ successRatio: 0.75, testRunCount: 2 });
    for (const query of ['filter=successRatio_gt_half', 'filter=testRunCount_gt_1.5', 'filter=successRatio_gt_1e3'])
      expect((await get(alice, `/api/v2/me/projects?${query}`)).status, query).toBe(400);
  });

  it('sees a project shared with the caller as shared, with the figures its owner sees', async () => {
    const cases: Array<[string, number[]]> = [
      ['filter=sharedWithCaller_eq_true', [ids.good]],
      ['filter=b_shared_eq_false', [ids.bobs]],
      [`filter=sharedById_eq_${alice.user.id}`, [ids.good]],
      [`filter=sharedByEmail_eq_${alice.user.email}`, [ids.good]],
      ['filter=sharedByEmail_isnull', [ids.bobs]],
      ['filter=testRunCount_eq_2', [ids.good]],
      ['filter=successRatio_gt_0.5', [ids.good]],
      ['sort=sharedWithCaller_a:id_a', [ids.bobs, ids.good]],
    ];
    for (const [query, expected] of cases)
      expect(await idsOf(bob, `/api/v2/me/projects?${query}`), query).toEqual(expected);
  });

  it("never finds another user's projects, runs or groups through a computed field", async () => {
    for (const query of [
      'filter=testRunCount_gt_0',
      'filter=successRatio_gt_0',
      `filter=userEmail_eq_${alice.user.email}`,
      'filter=shared_eq_true',
      'filter=sharedWithCaller_eq_true',
    ])
      expect(await idsOf(dave, `/api/v2/me/projects?${query}&limit=0`), query).toEqual([]);
    for (const query of ['filter=succeededDeviceCount_gt_0', 'filter=failedDeviceCount_gt_0', 'sort=deviceCount_d'])
      expect(await idsOf(dave, `/api/v2/me/runs?${query}`), query).toEqual([]);
    // Bob's own runs only, although Alice's project is shared with him.
    expect(await idsOf(bob, '/api/v2/me/runs?filter=succeededDeviceCount_gt_0')).toEqual([]);
    expect(await idsOf(bob, '/api/v2/me/runs?filter=failedDeviceCount_gt_0')).toEqual([ids.bobsRun]);
    for (const query of ['filter=deviceCount_gt_0', 'filter=shared_eq_true', `filter=userEmail_eq_${alice.user.email}`])
      expect(await idsOf(dave, `/api/v2/me/device-groups?${query}`), query).toEqual([]);
  });

  it('filters and sorts runs on their per-state counters and test case counts, as shown', async () => {
    const cases: Array<[string, number[]]> = [
      ['sort=n_finishedDeviceCount_d:succeededDeviceCount_d', [ids.green, ids.mixed]],
      ['filter=succeededDeviceCount_eq_2', [ids.green]],
      ['filter=failedDeviceCount_gt_0', [ids.mixed]],
      ['filter=finishedDeviceCount_eq_2;totalDeviceCount_eq_2;waitingDeviceCount_eq_0', [ids.mixed, ids.green]],
      // Each of its two ended device runs passed 2 test cases and failed 1.
      ['filter=successfulTestCaseCount_eq_4;failedTestCaseCount_eq_2;executedTestCaseCount_eq_6', [ids.mixed]],
      ['filter=testCaseCount_gt_0', [ids.mixed]],
      ['filter=successRatio_eq_0.5', [ids.mixed]],
      [`filter=startedByDisplayName_eq_${alice.user.email}`, [ids.mixed, ids.green]],
      ['filter=billable_eq_false;logsFileId_isnull;screenshotsFileId_isnull', [ids.mixed, ids.green]],
    ];
    for (const [query, expected] of cases) {
      expect(await idsOf(alice, `/api/v2/me/runs?${query}`), query).toEqual(expected);
      expect(await idsOf(alice, `/api/v2/me/projects/${ids.good}/runs?${query}`), query).toEqual(expected);
    }
    const shown = (await get(alice, `/api/v2/me/runs?filter=id_eq_${ids.mixed}`)).body.data[0] as Item;
    expect(shown).toMatchObject({
      succeededDeviceCount: 1,
      failedDeviceCount: 1,
      finishedDeviceCount: 2,
      successfulTestCaseCount: 4,
      failedTestCaseCount: 2,
      successRatio: 0.5,
    });
  });

  it("filters device sessions on their run's and project's names, durations and legacy status", async () => {
    const sessions = (await get(alice, '/api/v2/me/device-sessions?limit=0&sort=id_a')).body.data as Item[];
    expect(sessions).toHaveLength(4);
    const mixed = sessions.filter((session) => session.testRunId === ids.mixed).map((session) => session.id);
    const byName = await idsOf(alice, `/api/v2/me/device-sessions?filter=testRunName_eq_Test Run 2&sort=id_a`);
    expect(byName).toEqual(mixed);
    expect(await idsOf(alice, '/api/v2/me/device-sessions?filter=projectName_eq_Untouched')).toEqual([]);
    expect(
      await idsOf(alice, '/api/v2/me/device-sessions?filter=projectName_contains_green;type_eq_AUTOMATIC'),
    ).toHaveLength(4);
    const longest = await get(alice, '/api/v2/me/device-sessions?sort=duration_d:id_a&limit=0');
    const durations = (longest.body.data as Item[]).map((session) => session.duration as number);
    expect(durations).toEqual([...durations].sort((a, b) => b - a));
    const legacy = `/api/v2/me/projects/${ids.good}/runs/${ids.mixed}/device-runs`;
    expect((await get(alice, `${legacy}?filter=runStatus_eq_FAILED`)).body.data).toEqual([
      expect.objectContaining({ runStatus: 'FAILED' }),
    ]);
    expect((await get(alice, `${legacy}?filter=runStatus_eq_DONE`)).status).toBe(400);
    // Bob reads Alice's shared project, but his own sessions list holds only his.
    for (const query of ['filter=projectName_contains_green', `filter=testRunId_eq_${ids.mixed}`, 'sort=duration_d'])
      for (const session of (await get(bob, `/api/v2/me/device-sessions?${query}`)).body.data as Item[])
        expect(session.testRunId, query).toBe(ids.bobsRun);
  });

  it("shows and filters a session's owner e-mail, not the reader's, in a project shared with the reader", async () => {
    const shared = `/api/v2/me/projects/${ids.good}/runs/${ids.mixed}/device-sessions`;
    for (const reader of [alice, bob]) {
      const sessions = (await get(reader, shared)).body.data as Item[];
      expect(sessions).toHaveLength(2);
      for (const session of sessions) expect(session.userEmail).toBe(alice.user.email);
      expect(await idsOf(reader, `${shared}?filter=userEmail_eq_${alice.user.email}`)).toHaveLength(2);
      expect(await idsOf(reader, `${shared}?filter=userEmail_eq_${bob.user.email}`)).toEqual([]);
    }
    expect(await idsOf(bob, `/api/v2/me/device-sessions?filter=userEmail_eq_${alice.user.email}`)).toEqual([]);
  });

  it('filters device groups on their device count, owner and sharing, seen from the caller', async () => {
    expect(await idsOf(alice, '/api/v2/me/device-groups?filter=deviceCount_eq_2')).toEqual([ids.group]);
    expect(await idsOf(alice, '/api/v2/me/device-groups?filter=shared_eq_true')).toEqual([ids.group]);
    expect(await idsOf(bob, '/api/v2/me/device-groups?sort=deviceCount_d')).toEqual([ids.group, ids.bobsGroup]);
    expect(await idsOf(bob, '/api/v2/me/device-groups?filter=shared_eq_false')).toEqual([ids.bobsGroup]);
    expect(await idsOf(bob, `/api/v2/me/device-groups?filter=userEmail_eq_${alice.user.email}`)).toEqual([ids.group]);
    expect(await idsOf(bob, '/api/v2/me/device-groups?filter=isPublic_eq_false;creditsPrice_eq_0&sort=id_a')).toEqual([
      ids.group,
      ids.bobsGroup,
    ]);
  });
});
