/** Rate limits (API.md §2): per user whatever the credential, per address when anonymous, never agents. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAgent, androidDevice } from '../support/fake-agent.ts';
import { type Harness, type TestUser, call, createHarness } from '../support/harness.ts';

describe('rate limits', () => {
  let h: Harness;
  let alice: TestUser;
  let bob: TestUser;
  beforeAll(async () => {
    h = await createHarness('sqlite', { rateLimits: { perUser: 5, perIp: 3 } });
    alice = await h.user();
    bob = await h.user();
  });
  afterAll(async () => h.close());

  it('answers 429 with Retry-After, in the negotiated shape, once a user made the minute\'s requests', async () => {
    const session = await call(h.app, 'POST', '/auth/session', { json: true, body: { email: alice.user.email, password: 'password-1234' } });
    expect(session.status).toBe(200);
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    for (let i = 0; i < 5; i++) expect((await alice.call('GET', '/api/me', { json: true })).status).toBe(200);
    const limited = await alice.call('GET', '/api/me/projects', { json: true });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body).toMatchObject({ statusCode: 429, message: expect.stringContaining('at most 5 a minute per user') });
    const xml = await alice.call('GET', '/api/me', { headers: { accept: 'application/xml' } });
    expect(xml.status).toBe(429);
    expect(xml.text).toContain('<apiExceptionMessage>');
    // Another credential of the same user counts against the same limit; other users are not affected.
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: { cookie } })).status).toBe(429);
    expect((await bob.call('GET', '/api/me', { json: true })).status).toBe(200);
  });

  it('limits anonymous requests per address, and never limits agents', async () => {
    const fromAddress = (remoteAddress: string) => h.app.inject({ method: 'GET', url: '/api/v2/info', remoteAddress, headers: { accept: 'application/json' } });
    for (let i = 0; i < 3; i++) expect((await fromAddress('10.0.0.1')).statusCode).toBe(200);
    const limited = await fromAddress('10.0.0.1');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect((await fromAddress('10.0.0.2')).statusCode).toBe(200);

    const agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1')]);
    for (let i = 0; i < 10; i++) expect((await agent.post('/heartbeat', { running: [], unhealthy: [] })).status).toBe(200);
  });

  it('limits password guesses per address, on the OAuth password grant and the dashboard sign-in', async () => {
    const guess = (remoteAddress: string, url: string, payload: string, contentType: string) =>
      h.app.inject({ method: 'POST', url, remoteAddress, payload, headers: { 'content-type': contentType, accept: 'application/json' } });
    const oauth = (address: string) => guess(address, '/oauth/token', `client_id=testdroid-cloud-api&grant_type=password&username=${encodeURIComponent(alice.user.email)}&password=guess`, 'application/x-www-form-urlencoded');
    const signIn = (address: string) => guess(address, '/auth/session', JSON.stringify({ email: alice.user.email, password: 'guess' }), 'application/json');
    for (const [attempt, address] of [[oauth, '10.0.1.1'], [signIn, '10.0.1.2']] as const) {
      for (let i = 0; i < 3; i++) expect((await attempt(address)).statusCode).toBeOneOf([400, 401]);
      const limited = await attempt(address);
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toBeDefined();
      // Another address still gets its answer (a wrong password is still a wrong password).
      expect((await attempt(`${address}0`)).statusCode).toBeOneOf([400, 401]);
    }
  });
});
