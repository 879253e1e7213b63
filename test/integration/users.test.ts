import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { type Harness, call, createHarness, parseXml } from '../support/harness.ts';

describe.each(ENGINES)('account (%s)', (engine) => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness(engine);
  });
  afterEach(async () => h.close());

  it('answers the user record in XML by default and JSON on request, under every alias', async () => {
    const alice = await h.user({ plan: 'PLATINUM' });
    const xml = await alice.call('GET', '/api/me');
    expect(xml.status).toBe(200);
    expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8');
    const parsed = parseXml(xml.text).apiUser;
    expect(parsed).toMatchObject({
      id: String(alice.user.id),
      email: alice.user.email,
      plan: 'PLATINUM',
      apiKey: alice.key,
    });
    expect(parsed.roles.apiRole).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'PRIORITY_PLATINUM' })]),
    );

    for (const url of ['/api/me', '/api/v2/me', `/api/v2/users/${alice.user.id}`, `/api/users/${alice.user.id}`]) {
      const json = await alice.call('GET', url, { json: true });
      expect(json.status).toBe(200);
      expect(json.body).toMatchObject({
        id: alice.user.id,
        selfURI: `/users/${alice.user.id}`,
        email: alice.user.email,
        firstName: alice.user.firstName,
        lastName: alice.user.lastName,
        organization: null,
        status: 'ENABLED',
        enabled: true,
      });
    }
  });

  it('refuses missing and wrong credentials with 401, WWW-Authenticate and the error shape', async () => {
    const alice = await h.user();
    const none = await call(h.app, 'GET', '/api/me');
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Basic realm=/);
    expect(parseXml(none.text).apiExceptionMessage).toMatchObject({ statusCode: '401' });

    const wrongKey = await call(h.app, 'GET', '/api/me', { key: 'A'.repeat(32), json: true });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.headers['www-authenticate']).toMatch(/^Basic/);
    expect(wrongKey.body).toEqual({ message: expect.stringContaining('Invalid API key'), statusCode: 401 });

    // One character off (never the same character: a key ends in x one time in 62).
    const almost = await call(h.app, 'GET', '/api/me', {
      key: `${alice.key.slice(0, 31)}${alice.key.endsWith('x') ? 'y' : 'x'}`,
      json: true,
    });
    expect(almost.status).toBe(401);
    const garbage = await call(h.app, 'GET', '/api/me', { headers: { authorization: 'Bearer' }, json: true });
    expect(garbage.status).toBe(401);
  });

  it('answers another user id with 404, as if it did not exist', async () => {
    const alice = await h.user();
    const bob = await h.user();
    const answer = await alice.call('GET', `/api/v2/users/${bob.user.id}`, { json: true });
    expect(answer.status).toBe(404);
    expect(answer.body.message).toContain('User');
    expect(answer.text).not.toContain(bob.user.email);
  });

  it('resets the API key: the old key fails at once, the new one works', async () => {
    const alice = await h.user();
    const reset = await alice.call('POST', `/api/v2/users/${alice.user.id}/reset-api-key`, { json: true });
    expect(reset.status).toBe(200);
    const newKey = reset.body.apiKey as string;
    expect(newKey).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(newKey).not.toBe(alice.key);
    expect((await alice.call('GET', '/api/me')).status).toBe(401);
    const withNew = await call(h.app, 'GET', '/api/me', { key: newKey, json: true });
    expect(withNew.status).toBe(200);
    expect(withNew.body.apiKey).toBe(newKey);
  });

  it('updates the profile', async () => {
    const alice = await h.user();
    const answer = await alice.call('POST', '/api/me', {
      json: true,
      form: { firstName: 'Alice', organization: 'ACME' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      firstName: 'Alice',
      organization: 'ACME',
      name: `Alice ${alice.user.lastName}`,
    });
  });
});
