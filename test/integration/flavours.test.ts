/**
 * Deployment flavours (docs/api.md#deployment-flavours): on the public cloud a run cannot change device
 * settings and devices are cleaned the lighter way; private and enterprise clouds allow both and
 * hand the settings to the agent, never showing the Google password back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Flavour } from '../../src/domain/flavours.ts';
import { IOS_CRAWLER_ID } from '../../src/domain/frameworks.ts';
import { type FakeAgent, androidDevice, fakeAgent, iosDevice } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

const CRAWLER = 6;
const SETTINGS = {
  deviceLocale: 'fi_FI',
  wifiEnabled: false,
  googleAccountEmail: 'qa@example.com',
  googleAccountPassword: 'google-secret-1',
};

describe('deployment flavours', () => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let cleaning: string | undefined;
  let app: { id: number };
  afterEach(async () => h.close());

  async function cloud(flavour: Flavour) {
    h = await createHarness('sqlite', { flavour, limits: { claimWaitMs: 50 } });
    alice = await h.user();
    agent = await fakeAgent(h.app, h.ctx, 'host-1');
    cleaning = (await agent.hello([androidDevice('a1', 'Pixel 8')])).cleaning;
    await agent.cleanAll();
    app = await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example' },
    });
  }

  const runBody = (extra: Record<string, unknown>) => ({
    frameworkId: CRAWLER,
    projectName: 'P',
    files: [{ id: app.id }],
    deviceIds: [agent.deviceIds.get('a1')],
    ...extra,
  });

  it('refuses device settings on the public cloud, naming the rule and the fields, storing nothing', async () => {
    await cloud('public');
    expect((await alice.call('GET', '/api/v2/info', { json: true })).body.flavour).toBe('public');
    expect(cleaning).toBe('LIGHT');
    for (const [field, value] of Object.entries(SETTINGS).slice(0, 3)) {
      for (const path of ['/api/v2/runs', '/api/me/runs/config']) {
        const refused = await alice.call('POST', path, { json: true, body: runBody({ [field]: value }) });
        expect(refused.status).toBe(403);
        expect(refused.body.message).toContain('public cloud');
        expect(refused.body.message).toContain(field);
      }
    }
    const xml = await alice.call('POST', '/api/v2/runs', {
      body: runBody({ wifiEnabled: true }),
      headers: { accept: 'application/xml' },
    });
    expect(xml.status).toBe(403);
    expect(xml.text).toContain('<apiExceptionMessage>');
    expect((await alice.call('GET', '/api/me/projects', { json: true })).body.total).toBe(0);
    // Without settings the public cloud runs as usual.
    const plain = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: runBody({ deviceLanguageCode: 'de_DE' }),
    });
    expect(plain.status, plain.text).toBe(201);
  });

  it.each(['private', 'enterprise'] as const)(
    'hands the settings to the agent on a %s cloud, keeping the Google password out of sight',
    async (flavour) => {
      await cloud(flavour);
      expect(cleaning).toBe('FULL');
      const started = await alice.call('POST', '/api/v2/runs', { json: true, body: runBody(SETTINGS) });
      expect(started.status, started.text).toBe(201);
      const { assignments } = await agent.claim(['a1']);
      expect(assignments[0]!.deviceSettings).toEqual({
        locale: 'fi_FI',
        wifi: false,
        googleAccount: { email: 'qa@example.com', password: 'google-secret-1' },
      });
      const run = await alice.call('GET', `/api/v2/runs/${started.body.id}`, { json: true });
      expect(run.body.config).toMatchObject({
        deviceLocale: 'fi_FI',
        wifiEnabled: false,
        googleAccountEmail: 'qa@example.com',
      });
      expect(run.text).not.toContain('google-secret-1');
      const xml = await alice.call('GET', `/api/v2/runs/${started.body.id}`, {
        headers: { accept: 'application/xml' },
      });
      expect(xml.text).not.toContain('google-secret-1');
    },
  );

  it('checks the settings themselves, and asks for the Google account whole', async () => {
    await cloud('private');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ deviceLocale: 'not a locale' }, 'deviceLocale'],
      [{ wifiEnabled: 'sometimes' }, 'wifiEnabled'],
      [{ googleAccountEmail: 'nobody' }, 'googleAccountEmail'],
      [{ googleAccountEmail: 'qa@example.com' }, 'googleAccountPassword'],
      [{ googleAccountPassword: 'pw' }, 'googleAccountEmail'],
    ];
    for (const [extra, field] of cases) {
      const refused = await alice.call('POST', '/api/v2/runs', { json: true, body: runBody(extra) });
      expect(refused.status, JSON.stringify(extra)).toBe(400);
      expect(refused.body.message).toContain(field);
    }
    expect((await alice.call('GET', '/api/me/projects', { json: true })).body.total).toBe(0);
  });

  it('refuses on iOS what iOS cannot do (Wi-Fi, a Google account), and takes a locale', async () => {
    await cloud('private');
    await agent.hello([androidDevice('a1', 'Pixel 8'), iosDevice('i1', 'iPhone 15')]);
    await agent.cleanAll();
    const ipa = await fixtures.file(h.ctx, alice.user, { name: 'app.ipa', inputType: 'APPLICATION', osType: 'IOS' });
    const onIphone = (extra: Record<string, unknown>) => ({
      frameworkId: IOS_CRAWLER_ID,
      projectName: 'iOS',
      files: [{ id: ipa.id }],
      deviceIds: [agent.deviceIds.get('i1')],
      ...extra,
    });
    for (const [extra, field] of [
      [{ wifiEnabled: false }, 'wifiEnabled'],
      [{ googleAccountEmail: 'qa@example.com', googleAccountPassword: 'pw' }, 'googleAccountEmail'],
    ] as const) {
      const refused = await alice.call('POST', '/api/v2/runs', { json: true, body: onIphone(extra) });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain(field);
      expect(refused.body.message).toContain('iOS');
    }
    expect(
      (await alice.call('POST', '/api/v2/runs', { json: true, body: onIphone({ deviceLocale: 'fi_FI' }) })).status,
    ).toBe(201);
  });
});
