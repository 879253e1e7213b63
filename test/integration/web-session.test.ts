import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { type Harness, type TestUser, call, createHarness } from '../support/harness.ts';

describe.each(ENGINES)('dashboard sign-in sessions (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  beforeEach(async () => {
    h = await createHarness(engine);
    alice = await h.user({ email: 'alice@example.com' });
  });
  afterEach(async () => h.close());

  async function signIn(password = 'password-1234') {
    const answer = await call(h.app, 'POST', '/auth/session', {
      json: true,
      body: { email: 'Alice@example.com', password },
    });
    const setCookie = String(answer.headers['set-cookie'] ?? '');
    return { answer, setCookie, cookie: setCookie.split(';')[0]! };
  }
  const withSession = (cookie: string, csrf?: string) => ({
    cookie,
    ...(csrf !== undefined && { 'x-csrf-token': csrf }),
  });

  it('signs in with e-mail and password into an HttpOnly, SameSite=Strict cookie that the API accepts', async () => {
    expect((await alice.call('GET', '/api/me', { json: true })).body.lastLoginTime).toBeNull();
    await signIn('wrong-password');
    expect((await alice.call('GET', '/api/me', { json: true })).body.lastLoginTime).toBeNull();
    h.advance(1000);
    const { answer, setCookie, cookie } = await signIn();
    expect((await alice.call('GET', '/api/me', { json: true })).body.lastLoginTime).toBe(h.ctx.clock());
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      userId: alice.user.id,
      email: 'alice@example.com',
      csrfToken: expect.any(String),
      expiresTime: expect.any(Number),
      recentUntil: h.ctx.clock() + h.ctx.limits.recentSignInMs,
      recent: true,
    });
    expect(setCookie).toMatch(/^dc_session=[\w-]{40,};/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toMatch(/Secure/); // plain http here; https (or an https public URL) adds it

    const before = h.queries.length;
    const me = await call(h.app, 'GET', '/api/me', { json: true, headers: withSession(cookie) });
    expect(me.body).toMatchObject({ id: alice.user.id });
    expect(h.queries.length - before).toBe(2); // the session and its user in one statement; /api/me's storage usage in another
    const again = await call(h.app, 'GET', '/auth/session', { headers: withSession(cookie) });
    expect(again.body.csrfToken).toBe(answer.body.csrfToken);
  });

  it('marks the cookie Secure when the dashboard is reached over HTTPS (an https public URL)', async () => {
    const behindTls = await createHarness(engine, { publicUrl: 'https://cloud.example.com' });
    try {
      await behindTls.user({ email: 'carol@example.com' });
      const answer = await call(behindTls.app, 'POST', '/auth/session', {
        json: true,
        body: { email: 'carol@example.com', password: 'password-1234' },
      });
      expect(answer.status).toBe(200);
      expect(String(answer.headers['set-cookie'])).toMatch(/^dc_session=[\w-]{40,};.*; Secure/);
    } finally {
      await behindTls.close();
    }
  });

  it('needs the CSRF token for every change made with the cookie', async () => {
    const { answer, cookie } = await signIn();
    const noToken = await call(h.app, 'POST', '/api/me/projects', {
      json: true,
      headers: withSession(cookie),
      form: { name: 'P' },
    });
    expect(noToken.status).toBe(403);
    expect(noToken.body.message).toMatch(/X-CSRF-Token/);
    const wrong = await call(h.app, 'POST', '/api/me/projects', {
      json: true,
      headers: withSession(cookie, 'x'.repeat(32)),
      form: { name: 'P' },
    });
    expect(wrong.status).toBe(403);
    // A CSRF token belongs to its session: another session's (even the same user's) does not do.
    const other = await signIn();
    const borrowed = await call(h.app, 'POST', '/api/me/projects', {
      json: true,
      headers: withSession(cookie, other.answer.body.csrfToken),
      form: { name: 'P' },
    });
    expect(borrowed.status).toBe(403);
    expect(
      (await call(h.app, 'GET', '/api/me/projects', { json: true, headers: withSession(cookie) })).body.total,
    ).toBe(0); // nothing written
    const right = await call(h.app, 'POST', '/api/me/projects', {
      json: true,
      headers: withSession(cookie, answer.body.csrfToken),
      form: { name: 'P' },
    });
    expect(right.status).toBe(201);
  });

  it('refuses wrong credentials and forms, and signs out', async () => {
    const wrong = await signIn('not-the-password');
    expect([wrong.answer.status, wrong.answer.body.message, wrong.setCookie]).toEqual([
      401,
      'Wrong e-mail or password',
      '',
    ]);
    const form = await call(h.app, 'POST', '/auth/session', {
      json: true,
      form: { email: 'alice@example.com', password: 'password-1234' },
    });
    expect(form.status).toBe(415);
    expect(
      (await call(h.app, 'POST', '/auth/session', { json: true, body: { email: 'alice@example.com' } })).body.message,
    ).toMatch(/'password'/);

    const { answer, cookie } = await signIn();
    expect((await call(h.app, 'DELETE', '/auth/session', { headers: withSession(cookie) })).status).toBe(403);
    const out = await call(h.app, 'DELETE', '/auth/session', { headers: withSession(cookie, answer.body.csrfToken) });
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^dc_session=;/);
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: withSession(cookie) })).status).toBe(401);
    expect((await call(h.app, 'GET', '/auth/session', { json: true, headers: withSession(cookie) })).status).toBe(204);
  });

  it('ends sessions when they expire, and the other sessions when the password changes or the key is reset', async () => {
    const first = await signIn();
    h.advance(h.ctx.limits.sessionTtlMs + 1);
    expect((await call(h.app, 'GET', '/api/me', { json: true, headers: withSession(first.cookie) })).status).toBe(401);

    const me = async (session: { cookie: string }) =>
      (await call(h.app, 'GET', '/api/me', { json: true, headers: withSession(session.cookie) })).status;
    const second = await signIn();
    const elsewhere = await signIn();
    // A key reset made from the dashboard keeps the session that made it, and only that one.
    const reset = await call(h.app, 'POST', '/api/me/reset-api-key', {
      json: true,
      headers: withSession(second.cookie, second.answer.body.csrfToken),
    });
    expect(reset.status).toBe(200);
    expect(await me(second)).toBe(200);
    expect(await me(elsewhere)).toBe(401);

    const third = await signIn();
    const changed = await call(h.app, 'POST', '/api/me/password', {
      headers: withSession(second.cookie, second.answer.body.csrfToken),
      form: { currentPassword: 'password-1234', newPassword: 'another-password-2' },
    });
    expect(changed.status).toBe(204);
    expect(await me(second)).toBe(200); // the session that changed it, where the password was just entered
    expect(await me(third)).toBe(401);
    // Changed with the API key, no session is the one acting: all of them end.
    const fourth = await signIn('another-password-2');
    const byKey = await call(h.app, 'POST', '/api/me/password', {
      key: reset.body.apiKey,
      form: { currentPassword: 'another-password-2', newPassword: 'a-third-password-3' },
    });
    expect(byKey.status).toBe(204);
    expect(await me(second)).toBe(401);
    expect(await me(fourth)).toBe(401);
  });

  it("keeps a session to its own user's data", async () => {
    const bob = await h.user({ email: 'bob@example.com' });
    const project = await bob.call('POST', '/api/me/projects', { json: true, form: { name: 'Bob only' } });
    const { cookie } = await signIn();
    expect(
      (await call(h.app, 'GET', `/api/v2/projects/${project.body.id}`, { json: true, headers: withSession(cookie) }))
        .status,
    ).toBe(404);
  });
});
