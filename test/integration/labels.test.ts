/**
 * Device selection as the established service does it (docs/api.md#device-selection): devices
 * carry labels derived from what their hosts report, the device picker offers them, and device
 * groups defined by selectors follow the fleet as devices come, go and change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_GROUPS, matchesSelectors } from '../../src/domain/labels.ts';
import type { DeviceReport } from '../../src/protocol/v1.ts';
import { CRAWLER, type ProtocolWorld, protocolWorld, startRun } from '../support/agent-protocol.ts';
import { ENGINES } from '../support/engines.ts';
import { androidDevice, iosDevice } from '../support/fake-agent.ts';
import { type Answer, type TestUser, call, parseXml } from '../support/harness.ts';

const galaxy = (serial: string, displayName: string, releaseVersion: string, apiLevel: number): DeviceReport => ({
  ...androidDevice(serial, displayName),
  manufacturer: 'Samsung',
  releaseVersion,
  apiLevel,
});

interface LabelRecord {
  id: number;
  name: string;
  displayName: string;
  propertyGroupId: number;
  propertyGroupName: string;
}

describe.each(ENGINES)('device selection (%s)', (engine) => {
  let world: ProtocolWorld;
  let alice: TestUser;
  let bob: TestUser;
  /** Label ids by `group:name`, e.g. `android-version:14`. */
  const label = new Map<string, number>();
  const deviceId = (serial: string) => world.agent.deviceIds.get(serial)!;

  beforeAll(async () => {
    world = await protocolWorld(engine);
    alice = world.alice;
    bob = await world.h.user();
    // The world's host has two Pixels-like Google phones on Android 14 and an iPhone; add Samsungs.
    await world.agent.hello([
      androidDevice('a1', 'Pixel 8'),
      androidDevice('a2', 'Galaxy S24'),
      iosDevice('i1', 'iPhone 15'),
      galaxy('s1', 'Galaxy S23', '14', 34),
      galaxy('t1', 'Galaxy Tab S9', '13', 33),
    ]);
    await world.agent.cleanAll();
    const labels = await anonymous('/api/v2/labels?limit=0');
    for (const item of labels.body.data as LabelRecord[]) {
      const group = LABEL_GROUPS.find((candidate) => candidate.id === item.propertyGroupId)!;
      label.set(`${group.name}:${item.name}`, item.id);
    }
  }, 60_000);
  afterAll(async () => world?.h.close());

  const anonymous = (url: string): Promise<Answer> => call(world.h.app, 'GET', url, { json: true });
  const get = (who: TestUser, url: string) => who.call('GET', url, { json: true });
  const idsOf = (answer: Answer) => (answer.body.data as Array<{ id: number }>).map((item) => item.id).sort();
  const group = async (who: TestUser, displayName: string, osType = 'ANDROID') => {
    const answer = await who.call('POST', '/api/v2/me/device-groups', { json: true, form: { displayName, osType } });
    expect(answer.status, answer.text).toBe(201);
    return answer.body.id as number;
  };
  const members = async (groupId: number) => {
    const answer = await get(alice, `/api/v2/me/device-groups/${groupId}/devices`);
    expect(answer.status, answer.text).toBe(200);
    return Object.fromEntries(
      (answer.body.data as Array<{ displayName: string; deviceGroupOrigin: string }>).map((device) => [
        device.displayName,
        device.deviceGroupOrigin,
      ]),
    );
  };

  it('lists the label groups and the labels the devices carry, in the established shapes', async () => {
    const groups = await anonymous('/api/v2/label-groups');
    expect(groups.status).toBe(200);
    expect(groups.body.data.map((g: { name: string }) => g.name)).toEqual(LABEL_GROUPS.map((g) => g.name));
    expect(groups.body.data[0]).toEqual({
      id: 1,
      selfURI: '/label-groups/1',
      name: 'android-version',
      displayName: 'Android version',
      hiddenByDefault: false,
      labelsSortAscending: true,
    });
    expect((await anonymous('/api/v2/label-groups/3')).body).toMatchObject({
      name: 'api-level',
      hiddenByDefault: true,
    });

    expect([...label.keys()].sort()).toEqual(
      [
        'android-version:13',
        'android-version:14',
        'api-level:33',
        'api-level:34',
        'form-factor:phone',
        'form-factor:tablet',
        'ios-version:17',
        'manufacturer:apple',
        'manufacturer:google',
        'manufacturer:samsung',
        'platform:android',
        'platform:ios',
      ].sort(),
    );
    const samsung = await anonymous(`/api/v2/label-groups/4/labels?filter=s_name_eq_samsung`);
    expect(samsung.body.data).toEqual([
      {
        id: label.get('manufacturer:samsung'),
        selfURI: `/label-groups/4/labels/${label.get('manufacturer:samsung')}`,
        name: 'samsung',
        displayName: 'Samsung',
        propertyGroupId: 4,
        propertyGroupName: 'Manufacturer',
        labelGroupName: 'manufacturer',
      },
    ]);
    const versions = await anonymous('/api/v2/labels?filter=s_propertyGroupName_eq_Android version&sort=name_d');
    expect(versions.body.data.map((l: LabelRecord) => l.displayName)).toEqual(['14', '13']);
    expect((await anonymous('/api/v2/labels?filter=s_colour_eq_red')).status).toBe(400);
    expect((await anonymous('/api/v2/label-groups/99')).status).toBe(404);
    expect((await anonymous('/api/v2/label-groups/99/labels')).status).toBe(404);
    expect((await anonymous(`/api/v2/label-groups/1/labels/${label.get('manufacturer:samsung')}`)).status).toBe(404);
  });

  it("answers a device's labels as its properties, embedded only when asked", async () => {
    const tablet = deviceId('t1');
    const properties = await anonymous(`/api/v2/devices/${tablet}/properties`);
    expect(properties.status).toBe(200);
    expect(properties.body.data.map((l: LabelRecord) => `${l.propertyGroupName}: ${l.displayName}`)).toEqual([
      'Android version: 13',
      'API level: 33',
      'Manufacturer: Samsung',
      'Form factor: Tablet',
      'Platform: Android',
    ]);
    const paged = await anonymous(`/api/v2/devices/${tablet}/properties?limit=2&sort=propertyGroupName_a`);
    expect(paged.body).toMatchObject({ total: 5, limit: 2 });
    expect(paged.body.data.map((l: LabelRecord) => l.propertyGroupName)).toEqual(['Android version', 'API level']);
    const filtered = await anonymous(`/api/v2/devices/${tablet}/properties?filter=s_labelGroupName_eq_form-factor`);
    expect(filtered.body.data.map((l: LabelRecord) => l.displayName)).toEqual(['Tablet']);
    expect((await anonymous(`/api/v2/devices/${tablet}/properties?sort=colour_a`)).status).toBe(400);
    expect((await anonymous('/api/v2/label-groups?filter=b_hiddenByDefault_eq_true')).body.total).toBe(1);
    expect((await anonymous(`/api/v2/devices/${tablet}`)).body.properties).toBeNull();
    const withProperties = await anonymous(`/api/v2/devices/${tablet}?withProperties=true`);
    expect(withProperties.body.properties).toMatchObject({
      selfURI: `/devices/${tablet}/properties`,
      total: 5,
      data: properties.body.data,
    });
    const list = await anonymous('/api/v2/devices?withProperties=true&limit=0');
    expect(
      list.body.data.every(
        (d: { properties: { total: number } }) => d.properties.total === 5 || d.properties.total === 4,
      ),
    ).toBe(true);
    const xml = await call(world.h.app, 'GET', `/api/v2/devices/${tablet}?withProperties=true`);
    expect(parseXml(xml.text).apiDevice.properties.data.apiDeviceProperty).toHaveLength(5);
    expect((await anonymous('/api/v2/devices/999999/properties')).status).toBe(404);
  });

  it('offers the labels as the device picker’s filters, and filters the device list by them', async () => {
    const picker = await anonymous('/api/v2/devices/filters');
    expect(picker.status).toBe(200);
    expect(picker.body).toMatchObject({ id: 0, selfURI: '/devices/filters' });
    const byName = Object.fromEntries(
      picker.body.deviceFilterGroups.map((g: { name: string; deviceFilters: Array<{ displayName: string }> }) => [
        g.name,
        g.deviceFilters,
      ]),
    );
    expect(byName['Android version'].map((f: { displayName: string }) => f.displayName)).toEqual(['13', '14']);
    expect(byName['iOS version']).toEqual([
      {
        id: label.get('ios-version:17'),
        selfURI: `/label-groups/2/labels/${label.get('ios-version:17')}`,
        name: '17',
        displayName: '17',
        hidden: false,
        osType: 'IOS',
      },
    ]);
    expect(byName['API level'].every((f: { hidden: boolean }) => f.hidden)).toBe(true);
    expect(byName['Form factor'].find((f: { name: string }) => f.name === 'phone').osType).toBe('UNDEFINED');

    const filtered = (labels: string[]) =>
      anonymous(`/api/v2/devices?labelIds=${labels.map((key) => label.get(key)).join(',')}`);
    // One label group: alternatives; two: both must hold.
    expect(idsOf(await filtered(['android-version:13', 'android-version:14']))).toEqual(
      ['a1', 'a2', 's1', 't1'].map(deviceId).sort(),
    );
    expect(idsOf(await filtered(['android-version:14', 'manufacturer:samsung']))).toEqual([deviceId('s1')]);
    expect(idsOf(await filtered(['form-factor:tablet']))).toEqual([deviceId('t1')]);
    const paged = await anonymous(`/api/v2/devices?labelIds=${label.get('platform:android')}&limit=2`);
    expect(paged.body.total).toBe(4);
    expect(paged.body.next).toContain(`labelIds=${label.get('platform:android')}`);
    const unknown = await anonymous('/api/v2/devices?labelIds=999999');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('labelIds');
    // A host that knows the form factor says so, whatever the name.
    const fold = await world.agent.post('/devices', {
      devices: [{ ...androidDevice('f1', 'Pixel Fold'), formFactor: 'TABLET' }],
    });
    expect(fold.status, fold.text).toBe(200);
    const foldLabels = await anonymous(`/api/v2/devices/${fold.body.devices[0].deviceId}/properties`);
    expect(foldLabels.body.data.map((l: LabelRecord) => l.displayName)).toContain('Tablet');
    const badReport = await world.agent.post('/devices', {
      devices: [{ ...androidDevice('f2', 'Pixel Fold'), formFactor: 'WATCH' }],
    });
    expect(badReport.status).toBe(400);
  });

  it('keeps a selector group in step with the fleet: devices join, change and leave', async () => {
    const groupId = await group(alice, 'Samsung on 14');
    const added = await alice.call('POST', `/api/v2/me/device-groups/${groupId}/selectors`, {
      json: true,
      form: { 'selectorIds[]': [String(label.get('android-version:14')), String(label.get('manufacturer:samsung'))] },
    });
    expect(added.status, added.text).toBe(201);
    expect(added.body).toMatchObject({ id: groupId, deviceCount: 1 });
    expect(await members(groupId)).toEqual({ 'Galaxy S23': 'DYNAMIC' });
    const selectors = await get(alice, `/api/v2/me/device-groups/${groupId}/selectors`);
    expect(selectors.body.data.map((l: LabelRecord) => l.id).sort()).toEqual(
      [label.get('android-version:14'), label.get('manufacturer:samsung')].sort(),
    );
    expect(
      (await get(alice, `/api/v2/device-groups/${groupId}/selectors/${label.get('manufacturer:samsung')}`)).body,
    ).toMatchObject({ name: 'samsung', propertyGroupId: 4 });

    // Mixed: a device added by hand stays whatever its labels.
    await alice.call('POST', `/api/v2/me/device-groups/${groupId}/devices`, {
      json: true,
      form: { deviceId: String(deviceId('a1')) },
    });
    expect(await members(groupId)).toEqual({ 'Galaxy S23': 'DYNAMIC', 'Pixel 8': 'STATIC' });
    const notAdded = await alice.call('DELETE', `/api/v2/me/device-groups/${groupId}/devices/${deviceId('s1')}`, {
      json: true,
    });
    expect(notAdded.status).toBe(400);
    expect(notAdded.body.message).toContain('selector');

    // A phone plugged into the host later joins; added by hand too, it is in the group both ways.
    const plugged = await world.agent.post('/devices', { devices: [galaxy('s2', 'Galaxy S25', '14.1', 35)] });
    expect(plugged.status, plugged.text).toBe(200);
    const s25 = plugged.body.devices[0].deviceId as number;
    expect(await members(groupId)).toEqual({ 'Galaxy S23': 'DYNAMIC', 'Galaxy S25': 'DYNAMIC', 'Pixel 8': 'STATIC' });
    await alice.call('POST', `/api/v2/me/device-groups/${groupId}/devices`, {
      json: true,
      form: { deviceId: String(s25) },
    });
    expect((await members(groupId))['Galaxy S25']).toBe('HYBRID');
    expect((await get(alice, `/api/v2/me/device-groups/${groupId}`)).body.deviceCount).toBe(3);

    // The S23 is upgraded to Android 15: its host reports it so, and it leaves.
    await world.agent.hello([
      androidDevice('a1', 'Pixel 8'),
      androidDevice('a2', 'Galaxy S24'),
      iosDevice('i1', 'iPhone 15'),
      galaxy('s1', 'Galaxy S23', '15', 35),
      galaxy('t1', 'Galaxy Tab S9', '13', 33),
      galaxy('s2', 'Galaxy S25', '14.1', 35),
    ]);
    expect(await members(groupId)).toEqual({ 'Galaxy S25': 'HYBRID', 'Pixel 8': 'STATIC' });
    const versions = await anonymous(`/api/v2/devices/${deviceId('s1')}/properties`);
    expect(versions.body.data.map((l: LabelRecord) => l.displayName)).toContain('15');

    // Without the version selector the group takes every Samsung of its OS, and not the iPhone's.
    const removed = await alice.call(
      'DELETE',
      `/api/v2/me/device-groups/${groupId}/selectors/${label.get('android-version:14')}`,
    );
    expect(removed.status).toBe(204);
    expect(await members(groupId)).toEqual({
      'Galaxy S23': 'DYNAMIC',
      'Galaxy S25': 'HYBRID',
      'Galaxy Tab S9': 'DYNAMIC',
      'Pixel 8': 'STATIC',
    });
    const again = await alice.call(
      'DELETE',
      `/api/v2/me/device-groups/${groupId}/selectors/${label.get('android-version:14')}`,
    );
    expect(again.status).toBe(404);
  });

  it('runs on the devices a selector group holds when the run starts', async () => {
    const groupId = await group(alice, 'Tablets');
    await alice.call('POST', `/api/v2/device-groups/${groupId}/selectors`, {
      json: true,
      form: { 'selectorIds[]': [String(label.get('form-factor:tablet')), String(label.get('manufacturer:samsung'))] },
    });
    const run = await startRun(alice, {
      frameworkId: CRAWLER,
      projectName: 'Tablets only',
      files: [{ id: world.app.id, action: 'INSTALL' }],
      deviceGroupId: groupId,
    });
    expect(run.deviceCount).toBe(1);
    await world.agent.post('/devices', { devices: [galaxy('t2', 'Galaxy Tab S10', '14', 34)] });
    expect((await get(alice, `/api/v2/me/device-groups/${groupId}`)).body.deviceCount).toBe(2);
    const sessions = await get(alice, `/api/v2/runs/${run.id}/device-sessions`);
    expect(sessions.body.data.map((s: { device: { displayName: string } }) => s.device.displayName)).toEqual([
      'Galaxy Tab S9',
    ]);
  });

  it('refuses bad selectors with a 400 naming the field, in JSON and XML', async () => {
    const groupId = await group(alice, 'Picky');
    const post = (form: Record<string, string | string[]>, json = true) =>
      alice.call('POST', `/api/v2/me/device-groups/${groupId}/selectors`, { json, form });
    const forms: Array<Record<string, string>> = [
      {},
      { 'selectorIds[]': '999999' },
      { 'selectorIds[]': String(label.get('ios-version:17')) },
      { 'selectorIds[]': 'abc' },
    ];
    for (const form of forms) {
      const answer = await post(form);
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.body).toMatchObject({ statusCode: 400, message: expect.stringContaining('selectorId') });
    }
    const xml = await post({ 'selectorIds[]': '999999' }, false);
    expect(xml.status).toBe(400);
    expect(parseXml(xml.text).apiExceptionMessage.message).toContain('selectorIds');
    // A label of the other OS's version group is refused; one for every OS is fine.
    const iosGroup = await group(alice, 'Apples', 'IOS');
    const apple = await alice.call('POST', `/api/v2/me/device-groups/${iosGroup}/selectors`, {
      json: true,
      form: { 'selectorIds[]': [String(label.get('manufacturer:apple')), String(label.get('ios-version:17'))] },
    });
    expect(apple.status, apple.text).toBe(201);
    expect(apple.body.deviceCount).toBe(1);
  });

  it("answers 404 for another user's group and selectors, and for the public groups' selectors", async () => {
    const groupId = await group(alice, 'Mine');
    const samsung = String(label.get('manufacturer:samsung'));
    await alice.call('POST', `/api/v2/me/device-groups/${groupId}/selectors`, {
      json: true,
      form: { selectorId: samsung },
    });
    for (const path of [`/api/v2/me/device-groups/${groupId}`, `/api/v2/device-groups/${groupId}`]) {
      expect((await get(bob, `${path}/selectors`)).status).toBe(404);
      expect((await get(bob, `${path}/selectors/${samsung}`)).status).toBe(404);
      expect((await get(bob, `${path}/devices`)).status).toBe(404);
      const post = await bob.call('POST', `${path}/selectors`, { json: true, form: { selectorId: samsung } });
      expect(post.status).toBe(404);
      expect((await bob.call('DELETE', `${path}/selectors/${samsung}`, { json: true })).status).toBe(404);
    }
    expect(
      (await call(world.h.app, 'GET', `/api/v2/me/device-groups/${groupId}/selectors`, { json: true })).status,
    ).toBe(401);
    expect((await get(alice, `/api/v2/me/device-groups/${groupId}/selectors`)).body.total).toBe(1);

    const publicGroup = (await get(alice, '/api/v2/me/device-groups?withPublic=true')).body.data.find(
      (g: { userId: number | null }) => g.userId === null,
    );
    expect((await get(alice, `/api/v2/device-groups/${publicGroup.id}/selectors`)).body.total).toBe(0);
    const onPublic = await alice.call('POST', `/api/v2/device-groups/${publicGroup.id}/selectors`, {
      json: true,
      form: { selectorId: samsung },
    });
    expect(onPublic.status).toBe(404);
  });
});

describe('the selector rule (domain)', () => {
  const label = (id: number, groupId: number) => ({ id, groupId, name: String(id), displayName: String(id) });
  it('takes one of the selected labels of every label group named, and nothing without selectors', () => {
    const selectors = [label(1, 1), label(2, 1), label(10, 4)];
    expect(matchesSelectors(new Set([2, 10]), selectors)).toBe(true);
    expect(matchesSelectors(new Set([1, 2]), selectors)).toBe(false);
    expect(matchesSelectors(new Set([10]), selectors)).toBe(false);
    expect(matchesSelectors(new Set([1, 10]), [])).toBe(false);
  });
});
