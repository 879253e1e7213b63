/** Rate limits (docs/api.md#rate-limits): per user whatever the credential, per address when anonymous, never agents. */
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { applyRetention } from '../../src/jobs/retention.ts';
import { ENGINES } from '../support/engines.ts';
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

  it("answers 429 with Retry-After, in the negotiated shape, once a user made the minute's requests", async () => {
    const session = await call(h.app, 'POST', '/auth/session', {
      json: true,
      body: { email: alice.user.email, password: 'password-1234' },
    });
    expect(session.status).toBe(200);
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    for (let i = 0; i < 5; i++) expect((await alice.call('GET', '/api/me', { json: true })).status).toBe(200);
    const limited = await alice.call('GET', '/api/me/projects', { json: true });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body).toMatchObject({
      statusCode: 429,
      message: expect.stringContaining('at most 5 a minute per user'),
    });
    const xml = await alice.call('GET', '/api/me', { headers: { accept: 'application/xml' } });
    expect(xml.status).toBe(429);
    expect(xml.text).toContain('<apiExceptionMessage>');
    // Another credential of the same user counts against the same limit; other users are not affected.
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: { cookie } })).status).toBe(429);
    expect((await bob.call('GET', '/api/me', { json: true })).status).toBe(200);
  });

  it('limits anonymous requests per address, and never limits agents', async () => {
    const fromAddress = (remoteAddress: string) =>
      h.app.inject({ method: 'GET', url: '/api/v2/info', remoteAddress, headers: { accept: 'application/json' } });
    for (let i = 0; i < 3; i++) expect((await fromAddress('10.0.0.1')).statusCode).toBe(200);
    const limited = await fromAddress('10.0.0.1');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect((await fromAddress('10.0.0.2')).statusCode).toBe(200);

    const agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1')]);
    for (let i = 0; i < 10; i++)
      expect((await agent.post('/heartbeat', { running: [], unhealthy: [] })).status).toBe(200);
  });

  it('limits password guesses per address, on the OAuth password grant and the dashboard sign-in', async () => {
    const guess = (remoteAddress: string, url: string, payload: string, contentType: string) =>
      h.app.inject({
        method: 'POST',
        url,
        remoteAddress,
        payload,
        headers: { 'content-type': contentType, accept: 'application/json' },
      });
    const oauth = (address: string) =>
      guess(
        address,
        '/oauth/token',
        `client_id=testdroid-cloud-api&grant_type=password&username=${encodeURIComponent(alice.user.email)}&password=guess`,
        'application/x-www-form-urlencoded',
      );
    const signIn = (address: string) =>
      guess(
        address,
        '/auth/session',
        JSON.stringify({ email: alice.user.email, password: 'guess' }),
        'application/json',
      );
    for (const [attempt, address] of [
      [oauth, '10.0.1.1'],
      [signIn, '10.0.1.2'],
    ] as const) {
      for (let i = 0; i < 3; i++) expect((await attempt(address)).statusCode).toBeOneOf([400, 401]);
      const limited = await attempt(address);
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toBeDefined();
      // Another address still gets its answer (a wrong password is still a wrong password).
      expect((await attempt(`${address}0`)).statusCode).toBeOneOf([400, 401]);
    }
  });
});

/**
 * Password guesses per account (services/password-guesses.ts), on both engines: spread over many
 * addresses they are still stopped; the window slides; guesses sent at once cannot slip past the
 * count; the owner signs in again once the window has passed; nothing outlives the window.
 */
describe.each(ENGINES)('password guesses per account (%s)', (engine) => {
  const LIMIT = 5;
  const MINUTE = 60_000;
  let h: Harness;
  let alice: TestUser;
  let address = 0;
  beforeEach(async () => {
    // Three a minute per address: a guesser must spread over many addresses, as an attacker would.
    h = await createHarness(engine, {
      rateLimits: { perUser: 0, perIp: 3 },
      limits: { passwordGuesses: LIMIT, passwordGuessesPerAddress: 4 },
    });
    alice = await h.user({ email: 'alice@example.com' });
    await h.user({ email: 'bob@example.com' });
  });
  afterEach(async () => h.close());

  /** One attempt from an address never used before, alternating the two routes that take a password. */
  const attempt = async (email: string, password: string) => {
    address += 1;
    const remoteAddress = `10.${(address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}`;
    const answer =
      address % 2 === 0
        ? await h.app.inject({
            method: 'POST',
            url: '/oauth/token',
            remoteAddress,
            payload: new URLSearchParams({
              client_id: 'testdroid-cloud-api',
              grant_type: 'password',
              username: email,
              password,
            }).toString(),
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          })
        : await h.app.inject({
            method: 'POST',
            url: '/auth/session',
            remoteAddress,
            payload: JSON.stringify({ email, password }),
            headers: { 'content-type': 'application/json', accept: 'application/json' },
          });
    return { status: answer.statusCode, headers: answer.headers, body: JSON.parse(answer.body) };
  };
  const guesses = async (kind = 'account') =>
    Number(
      (
        await sql<{
          count: number | string;
        }>`SELECT COUNT(*) AS count FROM password_guesses WHERE account_key LIKE ${`${kind} %`}`.execute(h.database.db)
      ).rows[0]!.count,
    );

  it('stops guesses spread over many addresses per account, for the right password too, until the window has passed', async () => {
    for (let i = 0; i < LIMIT; i++)
      expect((await attempt('Alice@Example.com ', `guess-${i}`)).status).toBeOneOf([400, 401]);
    const locked = await attempt('alice@example.com', 'guess-x');
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBe(15 * 60);
    expect(locked.body.message).toMatch(
      /^Too many failed sign-ins for this account: at most 5 in 15 minutes, from any address; try again in 900 s/,
    );
    // The owner is refused as well while the guesses are in the window; their API key works.
    expect((await attempt('alice@example.com', 'password-1234')).status).toBe(429);
    expect((await alice.call('GET', '/api/me', { json: true })).status).toBe(200);
    // Another account is not affected; an unknown e-mail is counted the same, telling nothing.
    expect((await attempt('bob@example.com', 'password-1234')).status).toBe(200);
    for (let i = 0; i < LIMIT; i++)
      expect((await attempt('nobody@example.com', `guess-${i}`)).status).toBeOneOf([400, 401]);
    expect((await attempt('nobody@example.com', 'guess-x')).status).toBe(429);
    // Refused attempts are not stored: the table holds at most the limit per account.
    expect(await guesses()).toBe(2 * LIMIT);

    h.advance(15 * MINUTE);
    const owner = await attempt('alice@example.com', 'password-1234');
    expect(owner.status).toBe(200);
  });

  it('counts a wrong current password in a password change as a guess: a stolen key or cookie gets no more there', async () => {
    const change = (currentPassword: string) =>
      alice.call('POST', '/api/me/password', { form: { currentPassword, newPassword: 'taken-over-1234' }, json: true });
    // From the holder's one address: refused by the per-address count after 4 (this harness's limit).
    for (let i = 0; i < 4; i++) expect((await change(`guess-${i}`)).status).toBe(400);
    expect((await change('guess-x')).status).toBe(429);
    expect((await change('password-1234')).status).toBe(429);
    // The account counted them too: from fresh addresses, one more guess, then the account is locked.
    expect((await attempt('alice@example.com', 'guess-5')).status).toBeOneOf([400, 401]);
    expect((await attempt('alice@example.com', 'password-1234')).status).toBe(429);
    expect(await guesses()).toBe(LIMIT);
    h.advance(15 * MINUTE);
    expect((await attempt('alice@example.com', 'password-1234')).status).toBe(200);
  });

  it('slides: guesses at the end of one window and the start of the next are counted together', async () => {
    h.advance(14 * MINUTE);
    for (let i = 0; i < LIMIT; i++)
      expect((await attempt('alice@example.com', `late-${i}`)).status).toBeOneOf([400, 401]);
    // Two minutes on, a fixed window starting at minute 15 would allow five more.
    h.advance(2 * MINUTE);
    const refused = await attempt('alice@example.com', 'early');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBe(13 * 60);
    h.advance(13 * MINUTE - 1);
    expect((await attempt('alice@example.com', 'still-early')).status).toBe(429);
    h.advance(1);
    expect((await attempt('alice@example.com', 'password-1234')).status).toBe(200);
  });

  it('checks no more than the limit of guesses sent at the same moment', async () => {
    const answers = await Promise.all(
      Array.from({ length: 4 * LIMIT }, (_, i) => attempt('alice@example.com', `burst-${i}`)),
    );
    const checked = answers.filter((answer) => answer.status !== 429);
    // Each attempt is recorded before it is counted: under real concurrency (PostgreSQL) every one
    // of a burst may find more than the limit and be refused; never more than the limit get checked.
    expect(checked.length).toBeLessThanOrEqual(LIMIT);
    expect(checked.every((answer) => answer.status === 400 || answer.status === 401)).toBe(true);
    expect(await guesses()).toBe(checked.length);
  });

  it('counts failed sign-ins per address in the same sliding window, whatever the accounts guessed', async () => {
    // A per-minute request limit that lets them all through: the sliding count alone is at work.
    await h.close();
    h = await createHarness(engine, {
      rateLimits: { perUser: 0, perIp: 100 },
      limits: { passwordGuesses: LIMIT, passwordGuessesPerAddress: 4 },
    });
    alice = await h.user({ email: 'alice@example.com' });
    await h.user({ email: 'bob@example.com' });
    const from = (email: string, password: string, url = '/auth/session') =>
      h.app.inject({
        method: 'POST',
        url,
        remoteAddress: '10.9.9.9',
        payload: JSON.stringify({ email, password }),
        headers: { 'content-type': 'application/json', accept: 'application/json' },
      });
    // A sign-in is not a guess; neither is a request refused before any password was checked.
    expect((await from('alice@example.com', 'password-1234')).statusCode).toBe(200);
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: '/auth/session',
          remoteAddress: '10.9.9.9',
          payload: 'x',
          headers: { 'content-type': 'text/plain' },
        })
      ).statusCode,
    ).toBe(415);
    for (let i = 0; i < 4; i++) expect((await from(`user-${i}@example.com`, 'guess')).statusCode).toBe(401);
    h.advance(14 * MINUTE);
    const refused = await from('bob@example.com', 'password-1234');
    expect(refused.statusCode).toBe(429);
    expect(JSON.parse(refused.body).message).toMatch(
      /^Too many failed sign-ins from this address: at most 4 in 15 minutes; try again in 60 s/,
    );
    expect(refused.headers['retry-after']).toBe('60');
    // Elsewhere, the same account signs in.
    expect((await attempt('bob@example.com', 'password-1234')).status).toBe(200);
    h.advance(MINUTE);
    expect((await from('bob@example.com', 'password-1234')).statusCode).toBe(200);
  });

  it('keeps nothing beyond the window: the retention job removes what has expired', async () => {
    for (let i = 0; i < 3; i++) await attempt('alice@example.com', `guess-${i}`);
    for (let i = 0; i < 3; i++) await attempt(`someone-${i}@example.com`, 'guess');
    expect(await guesses()).toBe(6);
    h.advance(15 * MINUTE);
    expect(await guesses('address')).toBe(6);
    await applyRetention(h.ctx, () => undefined);
    expect(await guesses()).toBe(0);
    expect(await guesses('address')).toBe(0);
  });
});
