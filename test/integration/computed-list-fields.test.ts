/**
 * The fields the stored lists compute rather than hold (a project's figures and sharing flags, a
 * run's per-state counters and place in the queue, a device group's device count and owner, a
 * device's lock and availability, a recording's authorization, a member's name) take the list grammar in SQL
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

  /** Each value the items show of `field` finds exactly the items showing it, and sorting orders by it. */
  async function expectFiltersAsShown(who: TestUser, url: string, field: string): Promise<Set<unknown>> {
    const all = (await get(who, `${url}?limit=0&sort=id_a`)).body.data as Item[];
    const values = new Set(all.map((item) => item[field] ?? null));
    for (const value of values) {
      const filter = value === null ? `${field}_isnull` : `${field}_eq_${String(value)}`;
      const expected = all.filter((item) => (item[field] ?? null) === value).map((item) => item.id);
      expect(await idsOf(who, `${url}?limit=0&sort=id_a&filter=${filter}`), `${url} ${filter}`).toEqual(expected);
    }
    const sorted = (await get(who, `${url}?limit=0&sort=${field}_d:id_a`)).body.data as Item[];
    const rank = (item: Item) => (item[field] === null ? -1 : Number(item[field]));
    if (typeof all.find((item) => item[field] !== null)?.[field] !== 'string')
      expect(sorted.map(rank), `${url} sorted by ${field}`).toEqual(all.map(rank).sort((a, b) => b - a));
    return values;
  }

  it('filters and sorts devices on their state as shown: locked, lockReason, available', async () => {
    const fleet = {
      ready: await fixtures.device(h.ctx, 'Ready'),
      offline: await fixtures.device(h.ctx, 'Offline'),
      broken: await fixtures.device(h.ctx, 'Broken'),
      disabled: await fixtures.device(h.ctx, 'Disabled'),
      cleaning: await fixtures.device(h.ctx, 'Cleaning'),
    };
    const { devices } = h.ctx.store;
    for (const device of [fleet.ready, fleet.broken, fleet.disabled, fleet.cleaning])
      await devices.setOnline(device.id, true);
    await devices.transition(fleet.broken.id, 'takeOut', { reason: 'battery' });
    await devices.setEnabled(fleet.disabled.id, false);
    await devices.transition(fleet.cleaning.id, 'register');
    const shown = async (device: { id: number }) => (await get(alice, `/api/v2/devices/${device.id}`)).body as Item;
    expect(await shown(fleet.ready)).toMatchObject({ locked: false, lockReason: null, available: true });
    expect(await shown(fleet.offline)).toMatchObject({ locked: true, lockReason: null, available: false });
    expect(await shown(fleet.broken)).toMatchObject({ locked: true, lockReason: 'NOT_OPERATIONAL', available: false });
    expect(await shown(fleet.disabled)).toMatchObject({ locked: false, available: false });
    expect(await shown(fleet.cleaning)).toMatchObject({ locked: true, lockReason: 'CLEANING' });
    expect(await expectFiltersAsShown(alice, '/api/v2/devices', 'locked')).toEqual(new Set([true, false]));
    expect(await expectFiltersAsShown(alice, '/api/v2/devices', 'available')).toEqual(new Set([true, false]));
    expect(await expectFiltersAsShown(alice, '/api/v2/devices', 'lockReason')).toEqual(
      new Set([null, 'NOT_OPERATIONAL', 'CLEANING']),
    );
    expect(await idsOf(alice, '/api/v2/devices?filter=available_eq_true;displayName_in_Ready|Offline')).toEqual([
      fleet.ready.id,
    ]);
    expect(await idsOf(alice, '/api/v2/devices?filter=accountId_isnull;imageCornerRadius_isnull&limit=0')).toHaveLength(
      (await get(alice, '/api/v2/devices?limit=0')).body.total,
    );
    expect((await get(alice, '/api/v2/devices?filter=lockReason_eq_IDLE')).status).toBe(400);
  });

  it('filters and sorts waiting runs on their place in the queue, as shown', async () => {
    const carol = await h.user();
    const project = (await carol.call('POST', '/api/me/projects', form({ name: 'Queued' }))).body.id as number;
    const [busy, free] = [await fixtures.device(h.ctx, 'Busy'), await fixtures.device(h.ctx, 'Free')];
    const first = (await fixtures.run(h.ctx, carol.user, project, [busy], ['WAITING'])).id;
    h.advance(1000);
    const second = (await fixtures.run(h.ctx, carol.user, project, [busy], ['WAITING'])).id;
    h.advance(1000);
    // Third on the busy device, but first on the free one: its best place counts.
    const both = (await fixtures.run(h.ctx, carol.user, project, [busy, free], ['WAITING', 'WAITING'])).id;
    const done = (await fixtures.run(h.ctx, carol.user, project, [free], ['SUCCEEDED'])).id;
    const runs = (await get(carol, '/api/v2/me/runs?limit=0&sort=id_a')).body.data as Item[];
    expect(runs.map((run) => [run.id, run.queuePosition])).toEqual([
      [first, 1],
      [second, 2],
      [both, 1],
      [done, null],
    ]);
    for (const url of ['/api/v2/me/runs', `/api/v2/me/projects/${project}/runs`]) {
      await expectFiltersAsShown(carol, url, 'queuePosition');
      expect(await idsOf(carol, `${url}?filter=queuePosition_gt_1`)).toEqual([second]);
      expect(await idsOf(carol, `${url}?sort=queuePosition_a:id_a`)).toEqual([done, first, both, second]);
    }
    expect((await get(carol, '/api/v2/me/runs?filter=message_isnull')).body.message).toContain(
      "Field 'message' of test runs cannot be used in filter",
    );
    // Carol's runs wait behind no one else's: other users' lists do not see them.
    expect(await idsOf(dave, '/api/v2/me/runs?filter=queuePosition_isnotnull')).toEqual([]);
  });

  it("filters recordings on whether the account's current recorder authorized them", async () => {
    const carol = await h.user();
    const authorize = async () =>
      (await carol.call('POST', '/api/v2/me/recorder/authorizations', { json: true })).body.token as string;
    const record = async (name: string, authorizationToken?: string) =>
      (
        await carol.call(
          'POST',
          '/api/v2/me/recordings',
          form({ name, ...(authorizationToken && { authorizationToken }) }),
        )
      ).body.id as number;
    const old = await record('Under the old recorder', await authorize());
    const plain = await record('Without a recorder');
    const current = await record('Under the current recorder', await authorize());
    const url = '/api/v2/me/recordings';
    expect(await idsOf(carol, `${url}?filter=authorized_eq_true`)).toEqual([current]);
    expect(await idsOf(carol, `${url}?filter=stepLimit_isnull`)).toEqual([current]);
    expect(await idsOf(carol, `${url}?filter=stepLimit_eq_30&sort=id_a`)).toEqual([old, plain]);
    await expectFiltersAsShown(carol, url, 'authorized');
    await expectFiltersAsShown(carol, url, 'stepLimit');
  });

  it("filters and sorts an access group's members on their name, as shown", async () => {
    const group = (await alice.call('POST', '/api/v2/me/access-groups', form({ name: 'Team', scope: 'USER' }))).body
      .id as number;
    for (const member of [bob, dave])
      await alice.call('POST', `/api/v2/me/access-groups/${group}/users`, form({ email: member.user.email }));
    const url = `/api/v2/me/access-groups/${group}/users`;
    const members = (await get(alice, `${url}?sort=name_d`)).body.data as Item[];
    expect(members.map((member) => member.name)).toEqual(
      [bob, dave]
        .map((member) => `${member.user.firstName} ${member.user.lastName}`)
        .sort()
        .reverse(),
    );
    const [first] = members;
    expect(await idsOf(alice, `${url}?filter=name_eq_${String(first!.name)}`)).toEqual([first!.id]);
    expect(await idsOf(alice, `${url}?filter=name_like_First%&sort=id_a`)).toEqual([bob.user.id, dave.user.id]);
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
