import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { type Harness, type TestUser, call, createHarness, parseXml } from '../support/harness.ts';

const CLIENT = 'testdroid-cloud-api';

describe.each(ENGINES)('OAuth 2.0 (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  beforeEach(async () => {
    h = await createHarness(engine);
    alice = await h.user({ email: 'alice@example.com' });
  });
  afterEach(async () => h.close());

  const token = (form: Record<string, string>) => call(h.app, 'POST', '/oauth/token', { form });
  const signIn = () =>
    token({ client_id: CLIENT, grant_type: 'password', username: 'alice@example.com', password: 'password-1234' });
  const bearer = (accessToken: string, url = '/api/me') =>
    call(h.app, 'GET', url, { json: true, headers: { authorization: `Bearer ${accessToken}` } });

  it('grants tokens for the password (form) and reads the API with them (header or access_token)', async () => {
    const granted = await signIn();
    expect(granted.status).toBe(200);
    expect(granted.headers['cache-control']).toBe('no-store');
    expect(granted.body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      refresh_token: expect.any(String),
      expires_in: 3600,
      scope: 'read write',
    });
    expect((await bearer(granted.body.access_token)).body).toMatchObject({
      id: alice.user.id,
      email: 'alice@example.com',
    });
    // A token costs no more statements per request than an API key.
    const statements = async (send: () => Promise<unknown>) => {
      const before = h.queries.length;
      await send();
      return h.queries.length - before;
    };
    expect(await statements(() => bearer(granted.body.access_token))).toBe(
      await statements(() => alice.call('GET', '/api/me', { json: true })),
    );

    const viaGet = await token({
      client_id: CLIENT,
      grant_type: 'password',
      username: ' Alice@Example.com ',
      password: 'password-1234',
    });
    expect(viaGet.status).toBe(200);
    expect(viaGet.body.access_token).not.toBe(granted.body.access_token);
    const xml = await call(h.app, 'GET', `/api/v2/me/projects?access_token=${viaGet.body.access_token}&limit=5`);
    expect(xml.status).toBe(200);
    expect(parseXml(xml.text).apiList.limit).toBe('5');
    expect(
      (
        await call(h.app, 'GET', `/api/v2/users/${alice.user.id}?access_token=${viaGet.body.access_token}`, {
          json: true,
        })
      ).body.id,
    ).toBe(alice.user.id);
  });

  it('refuses a password in the URL, on GET and POST, issuing nothing; the refresh grant by GET still works', async () => {
    const query = new URLSearchParams({
      client_id: CLIENT,
      grant_type: 'password',
      username: 'alice@example.com',
      password: 'password-1234',
    });
    const issued = async () =>
      Number(
        (await sql<{ count: number | string }>`SELECT COUNT(*) AS count FROM oauth_tokens`.execute(h.database.db))
          .rows[0]!.count,
      );
    for (const method of ['GET', 'POST']) {
      const refused = await call(h.app, method, `/oauth/token?${query}`, method === 'POST' ? { form: {} } : {});
      expect([refused.status, refused.body.error], method).toEqual([400, 'invalid_request']);
      expect(refused.body.error_description).toMatch(/Send the password in the body of a POST/);
      expect(refused.text).not.toContain('password-1234');
    }
    expect(await issued()).toBe(0);
    const granted = (await signIn()).body;
    const refresh = new URLSearchParams({
      client_id: CLIENT,
      grant_type: 'refresh_token',
      refresh_token: granted.refresh_token,
    });
    expect((await call(h.app, 'GET', `/oauth/token?${refresh}`)).status).toBe(200);
  });

  it('answers OAuth errors in OAuth shape, naming what is wrong', async () => {
    const cases: Array<[Record<string, string>, number, string, RegExp]> = [
      [
        { client_id: CLIENT, grant_type: 'password', username: 'alice@example.com', password: 'wrong-password' },
        400,
        'invalid_grant',
        /Bad credentials/,
      ],
      [
        { client_id: CLIENT, grant_type: 'password', username: 'nobody@example.com', password: 'password-1234' },
        400,
        'invalid_grant',
        /Bad credentials/,
      ],
      [
        { client_id: CLIENT, grant_type: 'password', username: 'not an email', password: 'password-1234' },
        400,
        'invalid_grant',
        /Bad credentials/,
      ],
      [
        { client_id: CLIENT, grant_type: 'password', username: 'alice@example.com' },
        400,
        'invalid_request',
        /'password'/,
      ],
      [
        { client_id: 'someone-else', grant_type: 'password', username: 'alice@example.com', password: 'password-1234' },
        401,
        'invalid_client',
        /testdroid-cloud-api/,
      ],
      [
        { grant_type: 'password', username: 'alice@example.com', password: 'password-1234' },
        400,
        'invalid_request',
        /client_id/,
      ],
      [{ client_id: CLIENT }, 400, 'invalid_request', /grant_type/],
      [
        { client_id: CLIENT, grant_type: 'client_credentials' },
        400,
        'unsupported_grant_type',
        /password or refresh_token/,
      ],
      [
        { client_id: CLIENT, grant_type: 'refresh_token', refresh_token: 'made-up' },
        400,
        'invalid_grant',
        /Invalid refresh token/,
      ],
    ];
    for (const [form, status, error, description] of cases) {
      const answer = await token(form);
      expect([answer.status, answer.body.error], JSON.stringify(form)).toEqual([status, error]);
      expect(answer.body.error_description).toMatch(description);
    }
    const twice = await call(h.app, 'GET', `/oauth/token?client_id=${CLIENT}&client_id=${CLIENT}&grant_type=password`);
    expect([twice.status, twice.body.error]).toEqual([400, 'invalid_request']);

    const bad = await bearer('not-a-token');
    expect(bad.status).toBe(401);
    expect(bad.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
    expect(bad.body).toEqual({
      error: 'invalid_token',
      error_description: expect.stringMatching(/invalid or was revoked/),
    });
  });

  it('expires access tokens, rotates on refresh, and refuses a refresh token used twice', async () => {
    const first = (await signIn()).body;
    h.advance(h.ctx.limits.oauthAccessTtlMs + 1);
    const expired = await bearer(first.access_token);
    expect([expired.status, expired.body.error]).toEqual([401, 'invalid_token']);
    expect(expired.body.error_description).toMatch(/expired/);

    const refreshed = await token({
      client_id: CLIENT,
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(first.refresh_token);
    expect((await bearer(refreshed.body.access_token)).status).toBe(200);
    const again = await token({ client_id: CLIENT, grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);

    h.advance(h.ctx.limits.oauthRefreshTtlMs + 1);
    const late = await token({
      client_id: CLIENT,
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token,
    });
    expect([late.status, late.body.error]).toEqual([400, 'invalid_grant']);
    expect(late.body.error_description).toMatch(/expired/);
  });

  it('replaces the whole pair on refresh (GET query too): the old access token stops working before it expires', async () => {
    const first = (await signIn()).body;
    h.advance(1000);
    const query = new URLSearchParams({
      client_id: CLIENT,
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
    });
    const refreshed = await call(h.app, 'GET', `/oauth/token?${query}`);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      refresh_token: expect.any(String),
      expires_in: 3600,
      scope: 'read write',
    });
    expect(refreshed.body.access_token).not.toBe(first.access_token);
    const old = await bearer(first.access_token);
    expect([old.status, old.body.error]).toEqual([401, 'invalid_token']);
    expect((await bearer(refreshed.body.access_token)).body.id).toBe(alice.user.id);
    // The new access token lives a full hour from the refresh, not from the first grant.
    h.advance(h.ctx.limits.oauthAccessTtlMs - 500);
    expect((await bearer(refreshed.body.access_token)).status).toBe(200);
    h.advance(1000);
    expect((await bearer(refreshed.body.access_token)).status).toBe(401);
  });

  it('revokes every token on an API key reset and on a password change', async () => {
    await h.user({ email: 'bob@example.com' });
    const bobs = (
      await token({ client_id: CLIENT, grant_type: 'password', username: 'bob@example.com', password: 'password-1234' })
    ).body;
    const beforeReset = (await signIn()).body;
    expect((await alice.call('POST', '/api/v2/me/reset-api-key', { json: true })).status).toBe(200);
    expect((await bearer(beforeReset.access_token)).status).toBe(401);
    expect((await bearer(bobs.access_token)).status).toBe(200); // only the user's own tokens go
    expect(
      (await token({ client_id: CLIENT, grant_type: 'refresh_token', refresh_token: beforeReset.refresh_token }))
        .status,
    ).toBe(400);

    const beforeChange = (await signIn()).body;
    const wrong = await call(h.app, 'POST', '/api/me/password', {
      json: true,
      headers: { authorization: `Bearer ${beforeChange.access_token}` },
      form: { currentPassword: 'not-it-at-all', newPassword: 'a-new-password-1' },
    });
    expect([wrong.status, wrong.body.message]).toEqual([400, 'The current password is not right']);
    const short = await call(h.app, 'POST', '/api/me/password', {
      json: true,
      headers: { authorization: `Bearer ${beforeChange.access_token}` },
      form: { currentPassword: 'password-1234', newPassword: 'short' },
    });
    expect(short.status).toBe(400);
    expect((await bearer(beforeChange.access_token)).status).toBe(200); // refused changes revoke nothing
    const changed = await call(h.app, 'POST', `/api/v2/users/${alice.user.id}/password`, {
      headers: { authorization: `Bearer ${beforeChange.access_token}` },
      form: { currentPassword: 'password-1234', newPassword: 'a-new-password-1' },
    });
    expect(changed.status).toBe(204);
    expect((await bearer(beforeChange.access_token)).status).toBe(401);
    const refreshAfterChange = await token({
      client_id: CLIENT,
      grant_type: 'refresh_token',
      refresh_token: beforeChange.refresh_token,
    });
    expect([refreshAfterChange.status, refreshAfterChange.body.error]).toEqual([400, 'invalid_grant']);
    expect((await signIn()).status).toBe(400);
    expect(
      (
        await token({
          client_id: CLIENT,
          grant_type: 'password',
          username: 'alice@example.com',
          password: 'a-new-password-1',
        })
      ).status,
    ).toBe(200);
    expect((await bearer(bobs.access_token)).status).toBe(200);
  });

  it("never lets one user's token reach another user's data", async () => {
    const bob = await h.user({ email: 'bob@example.com' });
    const project = await bob.call('POST', '/api/me/projects', { json: true, form: { name: 'Bob only' } });
    const alicesToken = (await signIn()).body.access_token;
    expect((await bearer(alicesToken, `/api/v2/projects/${project.body.id}`)).status).toBe(404);
    expect((await bearer(alicesToken, `/api/v2/users/${bob.user.id}`)).status).toBe(404);
  });
});
