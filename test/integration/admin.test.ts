/**
 * Operators' routes (/api/admin/...): only the ADMIN role may call them, and what an operator
 * changes takes effect for everyone else at once (plans, roles, disabled accounts, devices taken
 * out of service).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adminRoutes } from '../../src/api/routes/admin.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, call, createHarness, parseXml } from '../support/harness.ts';

const SERVER_SIDE = 7;

describe.each(ENGINES)('operators (%s)', (engine) => {
  let h: Harness;
  let admin: TestUser;
  let alice: TestUser;

  beforeEach(async () => {
    h = await createHarness(engine, { limits: { claimWaitMs: 50 } });
    admin = await h.user({ role: 'ADMIN', email: 'ops@example.com' });
    alice = await h.user({ plan: 'SILVER', email: 'alice@example.com' });
  });
  afterEach(async () => h.close());

  it.each(adminRoutes.map((spec) => [spec.method, spec.path] as const))(
    '%s %s answers 403 to a normal user and 401 to no one',
    async (method, path) => {
      const url = `/api${path.replace(/:\w+/g, '1')}`;
      const body =
        method === 'GET'
          ? undefined
          : { enabled: false, plan: 'PLATINUM', email: 'x@example.com', password: 'password-1234' };
      const asUser = await alice.call(method, url, { json: true, body });
      expect(asUser.status, asUser.text).toBe(403);
      expect(asUser.body.message).toContain('ADMIN');
      expect((await call(h.app, method, url, { json: true, body })).status).toBe(401);
      // Nothing was changed by the refused calls.
      expect((await alice.call('GET', '/api/me', { json: true })).body).toMatchObject({
        plan: 'SILVER',
        status: 'ENABLED',
      });
    },
  );

  it('lists and creates accounts, without ever showing their API keys', async () => {
    const createdAnswer = await admin.call('POST', '/api/v2/admin/users', {
      json: true,
      body: { email: 'Bob@Example.com', password: 'bob-password', plan: 'gold', firstName: 'Bob' },
    });
    expect(createdAnswer.status, createdAnswer.text).toBe(201);
    expect(createdAnswer.body).toMatchObject({
      email: 'bob@example.com',
      plan: 'GOLD',
      role: 'USER',
      status: 'ENABLED',
      enabled: true,
      name: 'Bob',
    });
    expect(createdAnswer.body).not.toHaveProperty('apiKey');

    const listed = await admin.call('GET', '/api/admin/users', { json: true });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((user: { email: string }) => user.email)).toEqual([
      'ops@example.com',
      'alice@example.com',
      'bob@example.com',
    ]);
    expect(listed.text).not.toContain(alice.key);
    const xml = parseXml((await admin.call('GET', '/api/admin/users')).text);
    expect(xml.apiList.data.apiUser.map((user: { email: string }) => user.email)).toContain('bob@example.com');

    const read = await admin.call('GET', `/api/admin/users/${alice.user.id}`, { json: true });
    expect(read.body).toMatchObject({ id: alice.user.id, email: 'alice@example.com', plan: 'SILVER' });

    // The new account signs in to the dashboard with the password the operator chose.
    const signIn = await call(h.app, 'POST', '/auth/session', {
      json: true,
      body: { email: 'bob@example.com', password: 'bob-password' },
    });
    expect(signIn.status).toBe(200);
  });

  it("changes a user's plan and role, visible to the user at once", async () => {
    const upgraded = await admin.call('POST', `/api/admin/users/${alice.user.id}`, {
      json: true,
      form: { plan: 'PLATINUM' },
    });
    expect(upgraded.status, upgraded.text).toBe(200);
    expect(upgraded.body).toMatchObject({ plan: 'PLATINUM', role: 'USER' });
    const me = await alice.call('GET', '/api/me', { json: true });
    expect(me.body.plan).toBe('PLATINUM');
    expect(me.body.roles.map((role: { name: string }) => role.name)).toEqual(['USER', 'PRIORITY_PLATINUM']);

    expect((await alice.call('GET', '/api/admin/users', { json: true })).status).toBe(403);
    const promoted = await admin.call('POST', `/api/admin/users/${alice.user.id}`, {
      json: true,
      body: { role: 'ADMIN' },
    });
    expect(promoted.body.role).toBe('ADMIN');
    expect((await alice.call('GET', '/api/admin/users', { json: true })).status).toBe(200);
  });

  it('disables an account (key, tokens and sessions stop working) and enables it again', async () => {
    const signIn = await call(h.app, 'POST', '/auth/session', {
      json: true,
      body: { email: 'alice@example.com', password: 'password-1234' },
    });
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    expect((await call(h.app, 'GET', '/api/me', { headers: { cookie } })).status).toBe(200);

    const disabled = await admin.call('POST', `/api/admin/users/${alice.user.id}`, {
      json: true,
      body: { enabled: false },
    });
    expect(disabled.body).toMatchObject({ enabled: false, status: 'DISABLED' });
    expect((await alice.call('GET', '/api/me')).status).toBe(401);
    expect(
      (
        await call(h.app, 'POST', '/auth/session', {
          json: true,
          body: { email: 'alice@example.com', password: 'password-1234' },
        })
      ).status,
    ).toBe(401);

    const enabled = await admin.call('POST', `/api/admin/users/${alice.user.id}`, {
      json: true,
      form: { enabled: 'true' },
    });
    expect(enabled.body).toMatchObject({ enabled: true, status: 'ENABLED' });
    expect((await alice.call('GET', '/api/me')).status).toBe(200);
    // The session from before the account was disabled does not come back with it.
    expect((await call(h.app, 'GET', '/api/me', { headers: { cookie } })).status).toBe(401);
  });

  it.each([
    ['POST', '/api/admin/users/{alice}', { plan: 'DIAMOND' }, 400, "'plan'"],
    ['POST', '/api/admin/users/{alice}', { role: 'ROOT' }, 400, "'role'"],
    ['POST', '/api/admin/users/{alice}', { enabled: 'perhaps' }, 400, "'enabled'"],
    ['POST', '/api/admin/users/{admin}', { enabled: false }, 400, 'your own account'],
    ['POST', '/api/admin/users/{admin}', { role: 'USER' }, 400, 'ADMIN role from yourself'],
    ['POST', '/api/admin/users', { password: 'password-1234' }, 400, "'email'"],
    ['POST', '/api/admin/users', { email: 'new@example.com' }, 400, "'password'"],
    ['POST', '/api/admin/users', { email: 'new@example.com', password: 'short' }, 400, 'password'],
    ['POST', '/api/admin/users', { email: 'not-an-address', password: 'password-1234' }, 400, 'e-mail'],
    ['POST', '/api/admin/users', { email: 'alice@example.com', password: 'password-1234' }, 409, 'already exists'],
    ['POST', '/api/admin/users/999999', { plan: 'GOLD' }, 404, 'User'],
    ['GET', '/api/admin/users/abc', undefined, 404, 'User'],
    ['POST', '/api/admin/devices/999999', { enabled: false }, 404, 'Device'],
    ['POST', '/api/admin/devices/{device}', {}, 400, "Parameter 'enabled' is required"],
    ['POST', '/api/admin/devices/{device}', { enabled: 'off-ish' }, 400, "'enabled'"],
  ] as const)('%s %s with %j answers %i', async (method, template, body, status, message) => {
    const device = await fixtures.device(h.ctx, 'Pixel');
    const url = template
      .replace('{alice}', String(alice.user.id))
      .replace('{admin}', String(admin.user.id))
      .replace('{device}', String(device.id));
    const answer = await admin.call(method, url, { json: true, body });
    expect(answer.status, answer.text).toBe(status);
    expect(answer.body.message).toContain(message);
    // Refused changes change nothing.
    const me = (await alice.call('GET', '/api/me', { json: true })).body;
    expect([me.plan, me.roles[0].name, me.status]).toEqual(['SILVER', 'USER', 'ENABLED']);
    expect((await admin.call('GET', '/api/me', { json: true })).body).toMatchObject({
      status: 'ENABLED',
      roles: [{ name: 'ADMIN' }, expect.anything()],
    });
    expect((await h.ctx.store.devices.findById(device.id))!.enabled).toBe(true);
  });

  describe('devices', () => {
    let agent: FakeAgent;
    let files: Array<{ id: number; action: string }>;

    beforeEach(async () => {
      agent = await fakeAgent(h.app, h.ctx, 'lab-host-1');
      await agent.hello([androidDevice('a1', 'Pixel 8'), androidDevice('a2', 'Galaxy S24')]);
      await agent.cleanAll();
      const app = await fixtures.file(h.ctx, alice.user, {
        name: 'app.apk',
        inputType: 'APPLICATION',
        osType: 'ANDROID',
        properties: { package_name: 'com.example' },
      });
      const tests = await fixtures.file(h.ctx, alice.user, {
        name: 'tests.zip',
        inputType: 'TEST',
        properties: { entry_script: 'run-tests.sh' },
      });
      files = [
        { id: app.id, action: 'INSTALL' },
        { id: tests.id, action: 'RUN_TEST' },
      ];
    });

    const startRun = async () => {
      const started = await alice.call('POST', '/api/v2/runs', {
        json: true,
        body: { osType: 'ANDROID', frameworkId: SERVER_SIDE, projectName: 'Shop', files },
      });
      expect(started.status, started.text).toBe(201);
      const sessions = await alice.call('GET', `/api/v2/runs/${started.body.id}/device-sessions?limit=0`, {
        json: true,
      });
      return {
        run: started.body,
        sessions: sessions.body.data as Array<{
          id: number;
          device: { id: number };
          state: string;
          excludeReason: string | null;
        }>,
      };
    };

    it('lists the agents with their devices, in JSON and XML', async () => {
      const answer = await admin.call('GET', '/api/admin/agents', { json: true });
      expect(answer.status).toBe(200);
      expect(answer.body.total).toBe(1);
      const [listed] = answer.body.data;
      expect(listed).toMatchObject({
        name: 'lab-host-1',
        hostname: 'lab-host-1',
        version: 'test',
        deviceCount: 2,
        onlineDeviceCount: 2,
      });
      expect(
        listed.devices.map((device: { serial: string; state: string; enabled: boolean }) => [
          device.serial,
          device.state,
          device.enabled,
        ]),
      ).toEqual([
        ['a1', 'IDLE', true],
        ['a2', 'IDLE', true],
      ]);
      const xml = parseXml((await admin.call('GET', '/api/admin/agents')).text);
      expect(xml.apiList.data.apiAgent[0]).toMatchObject({ name: 'lab-host-1', deviceCount: '2' });
      expect(xml.apiList.data.apiAgent[0].devices.apiDevice).toHaveLength(2);
    });

    it('takes a device out of service: new runs exclude it (ADMIN), waiting runs say why, and it comes back', async () => {
      const pixel = agent.deviceIds.get('a1')!;
      const out = await admin.call('POST', `/api/admin/devices/${pixel}`, { json: true, body: { enabled: false } });
      expect(out.status, out.text).toBe(200);
      expect(out.body).toMatchObject({ id: pixel, enabled: false, serial: 'a1', available: false });
      expect((await call(h.app, 'GET', `/api/v2/devices/${pixel}`, { json: true })).body).toMatchObject({
        enabled: false,
        available: false,
      });

      const { run, sessions } = await startRun();
      expect(run).toMatchObject({ deviceCount: 2, excludedDeviceCount: 1, waitingDeviceCount: 1 });
      expect(sessions.find((session) => session.device.id === pixel)).toMatchObject({
        state: 'EXCLUDED',
        excludeReason: 'ADMIN',
      });

      // A device taken out while runs wait for it: they say so, and nothing starts on it.
      const galaxy = agent.deviceIds.get('a2')!;
      await admin.call('POST', `/api/admin/devices/${galaxy}`, { json: true, body: { enabled: false } });
      const waiting = await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true });
      expect(waiting.body.message).toMatch(/Galaxy S24: disabled by an operator/);
      expect((await agent.claim(['a1', 'a2'])).assignments).toEqual([]);

      const back = await admin.call('POST', `/api/admin/devices/${galaxy}`, { json: true, form: { enabled: 'true' } });
      expect(back.body).toMatchObject({ enabled: true, available: true });
      const { assignments } = await agent.claim(['a1', 'a2']);
      expect(assignments.map((assignment) => assignment.deviceId)).toEqual([galaxy]);
      const read = await admin.call('GET', `/api/admin/devices/${galaxy}`, { json: true });
      expect(read.body).toMatchObject({ state: 'TESTING', agentId: expect.any(Number) });
    });
  });
});
