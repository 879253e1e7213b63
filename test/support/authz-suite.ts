/**
 * The authorization matrix, for one store engine (test/integration/authz-matrix*.test.ts, a file
 * per engine so that vitest runs them side by side): every route of the route table (in its
 * aliases), the operators' routes, the agent protocol, OAuth and the dashboard's session, each
 * called with no credentials, a wrong key, another user's key, the owner's key (and the owner's
 * OAuth token and session cookie, which must be worth exactly the key), and an operator's key. The
 * table is read at run time, so a route added tomorrow is covered tomorrow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from '../../src/api/app.ts';
import type { RouteSpec } from '../../src/api/route.ts';
import { adminRoutes } from '../../src/api/routes/admin.ts';
import { PROTOCOL_PREFIX } from '../../src/protocol/v1.ts';
import { revealApiKey } from '../../src/services/users.ts';
import type { Engine } from './engines.ts';
import { type FakeAgent, androidDevice, fakeAgent } from './fake-agent.ts';
import { type Harness, type TestUser, createHarness } from './harness.ts';
import { type World, fillPath, seedWorld } from './world.ts';

const SPECS: readonly RouteSpec[] = [...routeTable({ version: 'test', flavour: 'private' }), ...adminRoutes];
const WRONG_KEY = 'Wr0ngKeyWr0ngKeyWr0ngKeyWr0ngKey';
/** What a write sends: enough for most routes to get past validation, so the owner's answer means something. */
const FORM = {
  name: 'matrix',
  displayName: 'matrix',
  mode: 'FULL_RUN',
  key: 'MATRIX',
  value: 'v',
  osType: 'ANDROID',
  deviceId: '1',
};

interface Caller {
  readonly name: string;
  readonly headers: Record<string, string>;
}

const basic = (key: string) => ({ authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` });

/** The URLs a route answers at: both prefixes, and `/users/{id}` for `/me` (docs/api.md#paths). */
function aliases(spec: RouteSpec): string[] {
  const forms =
    spec.path === '/me' || spec.path.startsWith('/me/')
      ? [spec.path, spec.path.replace(/^\/me/, '/users/:userId')]
      : [spec.path];
  return forms.flatMap((form) => [`/api/v2${form}`, `/api${form}`]);
}

/** Ids of the cloud's records rather than a tenant's: every signed-in user reads them (docs/api.md#properties). */
const CLOUD_WIDE = new Set(['propertyId']);
/**
 * Ids in a path that name a tenant's record, for which a stranger gets 404 (not the caller:
 * `users/:userId` is checked as a record too).
 */
const hasTenantIds = (url: string) => [...url.matchAll(/:(\w+)/g)].some((match) => !CLOUD_WIDE.has(match[1]!));

/** The matrix on one engine, as the calling file's tests. */
export function describeAuthzMatrix(engine: Engine): void {
  describe(`authorization matrix (${engine})`, () => {
    let h: Harness;
    let owner: World;
    let other: World;
    let admin: TestUser;
    let agent: FakeAgent;
    let ownerBearer: string;
    let ownerCookie: string;

    beforeAll(async () => {
      h = await createHarness(engine);
      owner = await seedWorld(h);
      other = await seedWorld(h);
      admin = await h.user({ role: 'ADMIN' });
      agent = await fakeAgent(h.app, h.ctx, `matrix-${engine}`);
      await agent.hello([androidDevice(`matrix-${engine}`)]);
      const token = await h.app.inject({
        method: 'POST',
        url: '/oauth/token',
        payload: `client_id=testdroid-cloud-api&grant_type=password&username=${encodeURIComponent(owner.user.user.email)}&password=password-1234`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      ownerBearer = JSON.parse(token.body).access_token;
      const session = await h.app.inject({
        method: 'POST',
        url: '/auth/session',
        payload: { email: owner.user.user.email, password: 'password-1234' },
      });
      ownerCookie = String(session.headers['set-cookie']).split(';')[0]!;
      expect(ownerBearer).toMatch(/^[\w-]{16,}$/); // base64url: '-' may break any run of 16 word characters
      expect(ownerCookie).toMatch(/^dc_session=[\w-]{20}/); // base64url: it may begin with '-'
    });
    afterAll(async () => h?.close());

    const send = (method: string, url: string, headers: Record<string, string>) =>
      h.app.inject({
        method: method as 'GET',
        url,
        headers: {
          accept: 'application/json',
          ...headers,
          ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        payload:
          method === 'GET'
            ? undefined
            : new URLSearchParams({ ...FORM, deviceId: String(owner.ids.deviceId) }).toString(),
      });

    it("covers the whole route table, with the operators' routes", () => {
      expect(SPECS.length).toBeGreaterThan(100);
      expect(SPECS.some((spec) => spec.access === 'admin')).toBe(true);
    });

    it.each(SPECS.map((spec) => [spec.access, spec.method, spec.path, spec] as const))(
      '%s route %s %s',
      async (access, method, routePath, spec) => {
        const problems: string[] = [];
        const expectStatus = (
          who: string,
          url: string,
          status: number,
          allowed: (status: number) => boolean,
          what: string,
        ) => {
          if (!allowed(status)) problems.push(`${who}: ${method} ${url} answered ${status}, expected ${what}`);
        };
        const neverSees = (who: string, url: string, text: string) => {
          for (const secret of owner.secrets)
            if (text.includes(secret))
              problems.push(`${who}: ${method} ${url} shows the owner's '${secret.slice(0, 20)}'`);
        };
        // Keys are read afresh: a stranger's own reset-api-key (a route of the table) changes theirs.
        const keyOf = async (id: number) => revealApiKey(h.ctx, (await h.ctx.store.users.findById(id))!);
        const strangers: Caller[] = [
          { name: 'another user', headers: basic(await keyOf(other.user.user.id)) },
          { name: 'an operator', headers: basic(await keyOf(admin.user.id)) },
        ];

        for (const template of aliases(spec)) {
          const url = fillPath(template, owner.ids);
          const none = await send(method, url, {});
          const wrong = await send(method, url, basic(WRONG_KEY));
          if (access === 'anonymous') {
            expectStatus('no credentials', url, none.statusCode, (s) => s >= 200 && s < 300, '2xx (anonymous route)');
            // A wrong key is refused even where none is needed, so that a broken CI setting shows at once.
            expectStatus('a wrong key', url, wrong.statusCode, (s) => s === 401, '401');
            continue;
          }
          expectStatus('no credentials', url, none.statusCode, (s) => s === 401, '401');
          if (none.statusCode === 401 && !String(none.headers['www-authenticate']).startsWith('Basic realm='))
            problems.push(`no credentials: ${url} without WWW-Authenticate`);
          expectStatus('a wrong key', url, wrong.statusCode, (s) => s === 401, '401');
          for (const [who, answer] of [
            ['no credentials', none],
            ['a wrong key', wrong],
          ] as const)
            neverSees(who, url, answer.body);

          for (const stranger of strangers) {
            // Every id is the owner's, `users/{id}` included: a stranger gets 404 there as for any other.
            const strangerUrl = url;
            const answer = await send(method, strangerUrl, { ...stranger.headers });
            if (/reset-api-key/.test(template))
              strangers.splice(
                0,
                2,
                { name: 'another user', headers: basic(await keyOf(other.user.user.id)) },
                { name: 'an operator', headers: basic(await keyOf(admin.user.id)) },
              );
            if (access === 'admin') {
              if (stranger.name === 'another user')
                expectStatus(stranger.name, strangerUrl, answer.statusCode, (s) => s === 403, '403 (operators only)');
            } else if (hasTenantIds(template)) {
              expectStatus(
                stranger.name,
                strangerUrl,
                answer.statusCode,
                (s) => s === 404,
                "404 for the owner's ids (never 403)",
              );
            } else {
              expectStatus(
                stranger.name,
                strangerUrl,
                answer.statusCode,
                (s) => s < 500 && s !== 401 && s !== 403,
                'their own answer',
              );
            }
            if (access !== 'admin' || stranger.name !== 'an operator')
              neverSees(stranger.name, strangerUrl, answer.body);
          }
        }

        // The owner (an operator, for operators' routes), on the canonical path. A write may use up a
        // record, so each write gets a world of its own.
        // An operator's write may remove a cloud-wide record that later routes read: a fresh world's.
        const self =
          access === 'admin'
            ? { key: await keyOf(admin.user.id), ids: method === 'GET' ? owner.ids : (await fresh()).ids }
            : method === 'GET'
              ? { key: owner.user.key, ids: owner.ids }
              : await fresh();
        const url = fillPath(`/api/v2${routePath}`, self.ids);
        const answer = await send(method, url, basic(self.key));
        expectStatus(
          'the owner',
          url,
          answer.statusCode,
          (s) => s < 500 && ![401, 403, 404].includes(s),
          'an answer (2xx, or 4xx about the input)',
        );
        if (method === 'GET' && access === 'user') {
          // The OAuth token and the dashboard's cookie are worth exactly the key.
          const bearer = await send(method, url, { authorization: `Bearer ${ownerBearer}` });
          const query = await send(method, `${url}${url.includes('?') ? '&' : '?'}access_token=${ownerBearer}`, {});
          const cookie = await send(method, url, { cookie: ownerCookie });
          for (const [who, other] of [
            ["the owner's token", bearer],
            ["the owner's token in the query", query],
            ["the owner's cookie", cookie],
          ] as const) {
            if (other.statusCode !== answer.statusCode)
              problems.push(`${who}: ${url} answered ${other.statusCode}, the key ${answer.statusCode}`);
          }
        }
        expect(problems).toEqual([]);
      },
    );

    async function fresh(): Promise<{ key: string; ids: Record<string, number> }> {
      const world = await seedWorld(h);
      return { key: world.user.key, ids: world.ids };
    }

    /**
     * What a sharee may do (docs/api.md#sharing): the owner's project is shared with an access group
     * the member is in. The member reads the project, its runs (with their config, as embedded in a
     * run), device sessions and their results (and asks for zips of them); the project's config and
     * file slots and every other route with the owner's ids are a 404, as for a stranger.
     */
    const shareeMay = (method: string, routePath: string): boolean => {
      if (method === 'POST') return /\/runs\/:runId\/\w+\.zip$/.test(routePath);
      if (method !== 'GET') return false;
      const names = [...routePath.matchAll(/:(\w+)/g)].map((match) => match[1]!);
      const readable = new Set(['projectId', 'runId', 'deviceRunId', 'deviceSessionId']);
      const outputFile = (name: string) => name === 'fileId' && /device-(runs|sessions)/.test(routePath);
      return (
        names.every((name) => readable.has(name) || outputFile(name)) &&
        !/\/projects\/:projectId\/(config|files\/)/.test(routePath)
      );
    };

    it.each(
      SPECS.filter((spec) => spec.access === 'user' && hasTenantIds(spec.path)).map(
        (spec) => [spec.method, spec.path] as const,
      ),
    )('a sharee: %s %s', async (method, routePath) => {
      // A write may change what it reaches: each write gets a world of its own.
      const world = method === 'GET' ? owner : await seedWorld(h);
      const url = fillPath(`/api/v2${routePath}`, world.ids);
      const answer = await send(method, url, basic(world.member.key));
      if (shareeMay(method, routePath)) {
        expect(answer.statusCode, `${method} ${url}: ${answer.body.slice(0, 200)}`).toBeGreaterThanOrEqual(200);
        expect(answer.statusCode, `${method} ${url}: ${answer.body.slice(0, 200)}`).toBeLessThan(300);
      } else {
        expect(answer.statusCode, `${method} ${url}`).toBe(404);
      }
    });

    it('takes only agent tokens on the agent protocol', async () => {
      const deviceId = agent.deviceIds.get(`matrix-${engine}`)!;
      const routes: Array<[string, string]> = [
        ['POST', '/hello'],
        ['POST', '/heartbeat'],
        ['POST', '/claims'],
        ['POST', `/device-runs/${owner.ids.deviceRunId}/progress`],
        ['POST', `/device-runs/${owner.ids.deviceRunId}/result`],
        ['PUT', `/device-runs/${owner.ids.deviceRunId}/artifacts?name=a.txt&kind=log`],
        ['GET', `/device-runs/${owner.ids.deviceRunId}/files/${owner.ids.fileId}`],
        ['POST', `/devices/${deviceId}/cleaned`],
        ['GET', '/ping'],
      ];
      const problems: string[] = [];
      for (const [method, route] of routes) {
        const url = `${PROTOCOL_PREFIX}${route}`;
        for (const [who, headers] of [
          ['no credentials', {}],
          ['a wrong agent token', { authorization: 'Bearer dca_wrongwrongwrongwrongwrong' }],
          ["a user's key", basic(owner.user.key)],
          ["a user's OAuth token", { authorization: `Bearer ${ownerBearer}` }],
          ["a user's cookie", { cookie: ownerCookie }],
        ] as const) {
          const answer = await h.app.inject({
            method: method as 'GET',
            url,
            headers: { ...headers, 'content-type': 'application/json' },
            payload: method === 'GET' ? undefined : '{}',
          });
          if (answer.statusCode !== 401) problems.push(`${who}: ${method} ${url} answered ${answer.statusCode}`);
        }
        // Someone else's device run is not this agent's to report on or read from (409 or 404, never the bytes).
        const own = await h.app.inject({
          method: method as 'GET',
          url,
          headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
          payload: method === 'GET' ? undefined : '{}',
        });
        if (own.statusCode === 401 || own.statusCode === 403 || own.statusCode >= 500)
          problems.push(`the agent: ${method} ${url} answered ${own.statusCode}`);
        if (route.includes('/files/') && own.statusCode === 200)
          problems.push(`the agent read a file of a device run it does not hold: ${url}`);
      }
      expect(problems).toEqual([]);
    });

    it('keeps OAuth and the dashboard session to their owners', async () => {
      // Grants: the owner's password works; another's password, or none, does not.
      const grant = (form: Record<string, string>) =>
        h.app.inject({
          method: 'POST',
          url: '/oauth/token',
          payload: new URLSearchParams({ client_id: 'testdroid-cloud-api', ...form }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
      expect(
        (await grant({ grant_type: 'password', username: owner.user.user.email, password: 'password-1234' }))
          .statusCode,
      ).toBe(200);
      const wrong = await grant({ grant_type: 'password', username: owner.user.user.email, password: 'not-it' });
      expect(wrong.statusCode).toBeGreaterThanOrEqual(400);
      expect(wrong.statusCode).toBeLessThan(500);
      expect(JSON.parse(wrong.body)).toMatchObject({ error: 'invalid_grant' });
      // The owner's token opens the owner's data and nobody else's.
      const foreign = await h.app.inject({
        method: 'GET',
        url: `/api/v2/projects/${other.ids.projectId}`,
        headers: { authorization: `Bearer ${ownerBearer}`, accept: 'application/json' },
      });
      expect(foreign.statusCode).toBe(404);
      const bad = await h.app.inject({
        method: 'GET',
        url: '/api/me',
        headers: { authorization: 'Bearer not-a-token', accept: 'application/json' },
      });
      expect(bad.statusCode).toBe(401);
      // The session: who is signed in, only with the cookie; changes need its CSRF token too.
      const anonymous = await h.app.inject({ method: 'GET', url: '/auth/session' });
      expect([204, 401]).toContain(anonymous.statusCode);
      expect(anonymous.body).not.toContain('userId');
      const me = await h.app.inject({ method: 'GET', url: '/auth/session', headers: { cookie: ownerCookie } });
      expect(JSON.parse(me.body)).toMatchObject({ userId: owner.user.user.id });
      const change = await h.app.inject({
        method: 'POST',
        url: '/api/me/projects',
        headers: { cookie: ownerCookie, accept: 'application/json', 'content-type': 'application/json' },
        payload: '{"name":"csrf"}',
      });
      expect(change.statusCode).toBe(403);
      expect((await h.app.inject({ method: 'DELETE', url: '/auth/session' })).statusCode).toBe(401);
    });

    it("answers operators' routes to operators only", async () => {
      const list = (headers: Record<string, string>) =>
        h.app.inject({
          method: 'GET',
          url: '/api/v2/admin/users',
          headers: { accept: 'application/json', ...headers },
        });
      expect((await list(basic(owner.user.key))).statusCode).toBe(403);
      expect((await list({ authorization: `Bearer ${ownerBearer}` })).statusCode).toBe(403);
      expect((await list({ cookie: ownerCookie })).statusCode).toBe(403);
      const answer = await list(basic(await revealApiKey(h.ctx, admin.user)));
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toContain(owner.user.user.email);
    });
  });
}
