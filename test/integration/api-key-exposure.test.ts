/**
 * Short-lived credentials (OAuth tokens, dashboard sessions) must not hand out the permanent one
 * (the API key): `/me` shows the key only to a caller that sent it; the dashboard reveals it only
 * within a few minutes of the password being entered; a password change and a key reset end the
 * other ways in. Each test plays someone holding a token or a cookie that is not theirs.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { type Answer, type Harness, type TestUser, call, createHarness } from '../support/harness.ts';

const CLIENT = 'testdroid-cloud-api';
const PASSWORD = 'password-1234';

describe.each(ENGINES)('who sees the API key (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  beforeEach(async () => {
    h = await createHarness(engine);
    alice = await h.user({ email: 'alice@example.com' });
  });
  afterEach(async () => h.close());

  const oauthToken = async () =>
    (
      await call(h.app, 'POST', '/oauth/token', {
        form: { client_id: CLIENT, grant_type: 'password', username: 'alice@example.com', password: PASSWORD },
      })
    ).body.access_token as string;
  async function signIn(password = PASSWORD) {
    const answer = await call(h.app, 'POST', '/auth/session', {
      json: true,
      body: { email: 'alice@example.com', password },
    });
    return { cookie: String(answer.headers['set-cookie']).split(';')[0]!, csrf: answer.body.csrfToken as string };
  }
  const asSession = (session: { cookie: string; csrf: string }) => ({
    cookie: session.cookie,
    'x-csrf-token': session.csrf,
  });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  /** The key the store holds now: whichever works for Basic. */
  const works = async (key: string) => (await call(h.app, 'GET', '/api/me', { key, json: true })).status === 200;
  const showsNoKey = (answer: Answer, key: string) => {
    expect(answer.status).toBe(200);
    expect(answer.text).not.toContain(key);
    expect(answer.text).not.toMatch(/apiKey/);
  };

  it('shows the key on /me to a caller that used the key, never to an OAuth token or a session', async () => {
    expect((await alice.call('GET', '/api/me', { json: true })).body.apiKey).toBe(alice.key);
    expect((await alice.call('GET', '/api/me')).text).toContain(`<apiKey>${alice.key}</apiKey>`);
    expect((await alice.call('POST', '/api/me', { json: true, form: { country: 'FI' } })).body.apiKey).toBe(alice.key);

    const token = await oauthToken();
    const session = await signIn();
    for (const url of ['/api/me', '/api/v2/me', `/api/v2/users/${alice.user.id}`]) {
      showsNoKey(await call(h.app, 'GET', url, { json: true, headers: bearer(token) }), alice.key);
      showsNoKey(await call(h.app, 'GET', url, { headers: bearer(token) }), alice.key); // XML too
      showsNoKey(await call(h.app, 'GET', `${url}?access_token=${token}`, { json: true }), alice.key);
      showsNoKey(await call(h.app, 'GET', url, { json: true, headers: { cookie: session.cookie } }), alice.key);
    }
    showsNoKey(
      await call(h.app, 'POST', '/api/me', { json: true, headers: bearer(token), form: { country: 'SE' } }),
      alice.key,
    );
    showsNoKey(
      await call(h.app, 'POST', '/api/me', { json: true, headers: asSession(session), form: { country: 'NO' } }),
      alice.key,
    );
    // The rest of the record is all there.
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: bearer(token) })).body).toMatchObject({
      id: alice.user.id,
      email: 'alice@example.com',
      plan: 'GOLD',
      country: 'NO',
    });
  });

  it('reveals the key to the dashboard only within 10 minutes of the password, and only to a session', async () => {
    const session = await signIn();
    const reveal = (headers: Record<string, string>) => call(h.app, 'POST', '/auth/api-key', { json: true, headers });
    const fresh = await reveal(asSession(session));
    expect(fresh.status).toBe(200);
    expect(fresh.body).toEqual({ apiKey: alice.key });
    expect(fresh.headers['cache-control']).toBe('no-store');

    expect((await reveal({ cookie: session.cookie })).status).toBe(403); // no CSRF token: another site's page
    expect((await reveal(bearer(await oauthToken()))).status).toBe(403);
    expect((await call(h.app, 'POST', '/auth/api-key', { key: alice.key, json: true })).status).toBe(403);
    expect((await reveal({})).status).toBe(401);

    h.advance(10 * 60_000 + 1);
    const stale = await reveal(asSession(session));
    expect(stale.status).toBe(403);
    expect(stale.body.message).toMatch(/within 10 minutes of entering your password/);
    expect(stale.text).not.toContain(alice.key);

    const confirm = (password: string) =>
      call(h.app, 'POST', '/auth/session/confirm', { json: true, headers: asSession(session), body: { password } });
    const wrong = await confirm('not-the-password');
    expect(wrong.status).toBe(400);
    expect((await reveal(asSession(session))).status).toBe(403);
    const right = await confirm(PASSWORD);
    expect(right.status).toBe(200);
    expect(right.body.recentUntil).toBe(h.ctx.clock() + 10 * 60_000);
    expect((await reveal(asSession(session))).body.apiKey).toBe(alice.key);
    // Confirming is for a session: a token cannot make itself "recent".
    expect(
      (
        await call(h.app, 'POST', '/auth/session/confirm', {
          json: true,
          headers: bearer(await oauthToken()),
          body: { password: PASSWORD },
        })
      ).status,
    ).toBe(403);
  });

  it('ends a session that guesses the password to confirm it', async () => {
    const session = await signIn();
    const other = await signIn();
    h.advance(10 * 60_000 + 1);
    const confirm = (password: string) =>
      call(h.app, 'POST', '/auth/session/confirm', { json: true, headers: asSession(session), body: { password } });
    for (let guess = 1; guess < 5; guess++) expect((await confirm(`guess-number-${guess}`)).status).toBe(400);
    const last = await confirm('guess-number-5');
    expect(last.status).toBe(401);
    expect((await confirm(PASSWORD)).status).toBe(401); // even the right one: the session is gone
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: { cookie: session.cookie } })).status).toBe(401);
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: { cookie: other.cookie } })).status).toBe(200);
  });

  it('resets the key with the key or a recent session (which sees the new key), never with an OAuth token', async () => {
    const token = await oauthToken();
    const byToken = await call(h.app, 'POST', '/api/me/reset-api-key', { json: true, headers: bearer(token) });
    expect(byToken.status).toBe(403);
    expect(await works(alice.key)).toBe(true); // nothing changed

    const session = await signIn();
    const otherSession = await signIn();
    h.advance(10 * 60_000 + 1);
    const stale = await call(h.app, 'POST', '/api/me/reset-api-key', { json: true, headers: asSession(session) });
    expect(stale.status).toBe(403);
    expect(await works(alice.key)).toBe(true);

    await call(h.app, 'POST', '/auth/session/confirm', {
      json: true,
      headers: asSession(session),
      body: { password: PASSWORD },
    });
    const reset = await call(h.app, 'POST', '/api/me/reset-api-key', { json: true, headers: asSession(session) });
    expect(reset.status).toBe(200);
    const newKey = reset.body.apiKey as string;
    expect(newKey).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(await works(alice.key)).toBe(false);
    expect(await works(newKey)).toBe(true);
    // The session that reset it goes on; every other way in ends.
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: { cookie: session.cookie } })).status).toBe(200);
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: { cookie: otherSession.cookie } })).status).toBe(
      401,
    );
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: bearer(token) })).status).toBe(401);

    // With the key (a script rotating its own): the answer has the new key, and no session survives.
    const byKey = await call(h.app, 'POST', '/api/me/reset-api-key', { key: newKey, json: true });
    expect(byKey.status).toBe(200);
    expect(await works(byKey.body.apiKey)).toBe(true);
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: { cookie: session.cookie } })).status).toBe(401);
  });

  it('ends every OAuth token and every other session on a password change, keeping the session that made it', async () => {
    const acting = await signIn();
    const other = await signIn();
    const tokens = [await oauthToken(), await oauthToken()];
    const changed = await call(h.app, 'POST', '/api/me/password', {
      headers: asSession(acting),
      form: { currentPassword: PASSWORD, newPassword: 'a-new-password-5' },
    });
    expect(changed.status).toBe(204);
    for (const token of tokens)
      expect((await call(h.app, 'GET', '/api/me', { json: true, headers: bearer(token) })).status).toBe(401);
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: { cookie: other.cookie } })).status).toBe(401);
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: { cookie: acting.cookie } })).status).toBe(200);
    // The password was just entered there: the acting session may reveal the key at once.
    expect((await call(h.app, 'POST', '/auth/api-key', { json: true, headers: asSession(acting) })).body.apiKey).toBe(
      alice.key,
    );
    expect(await works(alice.key)).toBe(true); // API keys are not sign-ins: scripts keep working

    // Changed with an OAuth token: the token that did it ends with the others.
    const token = (
      await call(h.app, 'POST', '/oauth/token', {
        form: {
          client_id: CLIENT,
          grant_type: 'password',
          username: 'alice@example.com',
          password: 'a-new-password-5',
        },
      })
    ).body.access_token;
    const byToken = await call(h.app, 'POST', '/api/me/password', {
      headers: bearer(token),
      form: { currentPassword: 'a-new-password-5', newPassword: 'a-newer-password-6' },
    });
    expect(byToken.status).toBe(204);
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: bearer(token) })).status).toBe(401);
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: { cookie: acting.cookie } })).status).toBe(401);
  });
});
