/**
 * The WebDriver hub's refusals (docs/api.md#appium-client-side): every bad new-session request is a
 * W3C error naming the problem, never a 5xx of the hub's own nor a run started; a session id that
 * is not one of the cloud's, guessed or ended, is unknown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, call, createHarness } from '../support/harness.ts';

describe.each(ENGINES)('the WebDriver hub refuses (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let bob: TestUser;
  let app: { id: number };
  let bobsApp: { id: number };

  beforeAll(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    bob = await h.user();
    const device = await h.ctx.store.devices.insert(
      {
        displayName: 'Google Pixel 8',
        manufacturer: 'Google',
        osType: 'ANDROID',
        platform: 'ANDROID',
        releaseVersion: '14',
        apiLevel: 34,
        executionKinds: ['appium-client'],
      },
      h.ctx.clock(),
    );
    await fixtures.publicGroup(h.ctx, 'All Android devices', [device]);
    const apk = { name: 'app.apk', inputType: 'APPLICATION', osType: 'ANDROID' } as const;
    app = await fixtures.file(h.ctx, alice.user, { ...apk, properties: { package_name: 'com.example' } });
    bobsApp = await fixtures.file(h.ctx, bob.user, { ...apk, properties: { package_name: 'com.bob' } });
  });
  afterAll(async () => {
    await h.close();
  });

  const newSession = (body: unknown) =>
    call(h.app, 'POST', '/wd/hub/session', {
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
  const w3c = (options: Record<string, unknown>, caps: Record<string, unknown> = { platformName: 'Android' }) => ({
    capabilities: { alwaysMatch: { ...caps, 'bitbar:options': { apiKey: alice.key, ...options } }, firstMatch: [{}] },
  });
  const runCount = async () => (await h.database.db.selectFrom('test_runs').select('id').execute()).length;

  it.each([
    ['a body that is not JSON', '{"capabilities": ', 400, 'invalid argument', 'not JSON'],
    ['no capabilities at all', {}, 400, 'invalid argument', '"capabilities"'],
    ['alwaysMatch that is not an object', { capabilities: { alwaysMatch: 3 } }, 400, 'invalid argument', 'alwaysMatch'],
    ['an empty firstMatch', { capabilities: { firstMatch: [] } }, 400, 'invalid argument', 'firstMatch'],
    ['no platformName', () => w3c({}, {}), 400, 'invalid argument', 'platformName'],
    ['an unknown platform', () => w3c({}, { platformName: 'Symbian' }), 400, 'invalid argument', 'Symbian'],
    ['an app id that is not an id', () => w3c({ app: 'shop.apk' }), 400, 'invalid argument', '"app"'],
    ['a testTimeout that is no number', () => w3c({ testTimeout: 'soon' }), 400, 'invalid argument', 'testTimeout'],
    ['no key', { capabilities: { alwaysMatch: { platformName: 'Android' } } }, 500, 'session not created', 'apiKey'],
    ['a wrong key', () => w3c({ apiKey: 'A'.repeat(32) }), 500, 'session not created', 'not valid'],
    ['an unknown app', () => w3c({ app: 99_999 }), 500, 'session not created', '99999'],
    ["another user's app", () => w3c({ app: bobsApp.id }), 500, 'session not created', () => String(bobsApp.id)],
    ['no such device', () => w3c({ app: app.id, device: 'Nokia 3310' }), 500, 'session not created', 'Nokia 3310'],
    ['no iOS device', () => w3c({ app: app.id }, { platformName: 'iOS' }), 500, 'session not created', 'IOS'],
  ])('%s', async (_name, body, status, error, named) => {
    const answer = await newSession(typeof body === 'function' ? body() : body);
    expect(answer.status, answer.text).toBe(status);
    expect(answer.body.value.error).toBe(error);
    expect(answer.body.value.message).toContain(typeof named === 'function' ? named() : named);
    expect(await runCount()).toBe(0);
  });

  it('reads the flat bitbar_ and testdroid_ capabilities of older clients, and refuses their wrong key too', async () => {
    for (const prefix of ['bitbar_', 'testdroid_']) {
      const answer = await newSession({
        desiredCapabilities: { platformName: 'Android', [`${prefix}apiKey`]: 'B'.repeat(32), [`${prefix}app`]: app.id },
      });
      expect(answer.status).toBe(500);
      expect(answer.body.value.message).toContain('API key');
    }
  });

  it('knows no session it did not hand out: guessed, malformed, or of a command it does not serve', async () => {
    for (const id of ['0123456789abcdef0123456789abcdef', 'not-a-session', '../../me']) {
      const answer = await call(h.app, 'GET', `/wd/hub/session/${encodeURIComponent(id)}/source`);
      expect(answer.status).toBe(404);
      expect(answer.body.value.error).toBe('invalid session id');
    }
    const deleted = await call(h.app, 'DELETE', '/wd/hub/session/0123456789abcdef0123456789abcdef');
    expect(deleted.body.value.error).toBe('invalid session id');
    const unknown = await call(h.app, 'GET', '/wd/hub/sessions');
    expect(unknown.status).toBe(404);
    expect(unknown.body.value.error).toBe('unknown command');
    const status = await call(h.app, 'GET', '/wd/hub/status');
    expect(status.body.value.ready).toBe(true);
    // WebDriver answers are not hashed for an ETag (no WebDriver client asks for one); the API's are.
    expect(status.headers.etag).toBeUndefined();
    expect((await call(h.app, 'GET', '/api/v2/available-frameworks')).headers.etag).toMatch(/^"[^"]+"$/);
  });
});
