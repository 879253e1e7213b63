/**
 * Every id-bearing route, enumerated from the route table itself (so a new route is covered the
 * day it is added): user B asking with user A's ids gets 404, and A's data is unchanged after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from '../../src/api/app.ts';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

// System properties are the cloud's, read by everyone and written by operators (authz-matrix covers them).
const idRoutes = routeTable({ version: 'test', flavour: 'private' }).filter(
  (spec) => spec.access !== 'anonymous' && spec.path.includes(':') && !spec.path.includes(':propertyId'),
);

describe.each(ENGINES)('isolation (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let bob: TestUser;
  const ids: Record<string, number> = {};
  let snapshot: string;

  async function aliceView() {
    const parts = await Promise.all([
      alice.call('GET', '/api/me/projects?limit=0', { json: true }),
      alice.call('GET', `/api/v2/projects/${ids.projectId}/config`, { json: true }),
      alice.call('GET', `/api/v2/projects/${ids.projectId}/config/parameters`, { json: true }),
      alice.call('GET', `/api/me/device-groups/${ids.groupId}/devices`, { json: true }),
      alice.call('GET', '/api/me', { json: true }),
      alice.call('GET', '/api/me/notifications', { json: true }),
    ]);
    return JSON.stringify(parts.map((part) => part.body));
  }

  beforeAll(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    bob = await h.user();
    const device = await fixtures.device(h.ctx, 'Pixel');
    ids.userId = alice.user.id;
    ids.projectId = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Secret' } })).body.id;
    ids.groupId = (
      await alice.call('POST', '/api/me/device-groups', {
        json: true,
        form: { displayName: 'Mine', osType: 'ANDROID' },
      })
    ).body.id;
    await alice.call('POST', `/api/me/device-groups/${ids.groupId}/devices`, {
      json: true,
      form: { deviceId: String(device.id) },
    });
    ids.deviceId = device.id;
    ids.parameterId = (
      await alice.call('POST', `/api/me/projects/${ids.projectId}/config/parameters`, {
        json: true,
        form: { key: 'K', value: 'V' },
      })
    ).body.id;
    const run = await fixtures.run(h.ctx, alice.user, ids.projectId, [device], ['SUCCEEDED']);
    ids.runId = run.id;
    const [deviceRun] = await h.ctx.store.deviceRuns.ofRuns([run.id]);
    ids.deviceRunId = deviceRun!.id;
    ids.deviceSessionId = deviceRun!.id;
    ids.recordingId = (
      await alice.call('POST', '/api/me/recordings', { json: true, form: { name: 'Secret recording' } })
    ).body.id;
    // Alice shares her project with an access group Carol is in: Bob, outside it, still sees nothing.
    const carol = await h.user();
    ids.accessGroupId = (
      await alice.call('POST', '/api/me/access-groups', { json: true, form: { name: 'Secret group' } })
    ).body.id;
    ids.memberId = carol.user.id;
    await alice.call('POST', `/api/me/access-groups/${ids.accessGroupId}/users`, {
      json: true,
      form: { email: carol.user.email },
    });
    ids.sharedResourceId = (
      await alice.call('POST', `/api/me/projects/${ids.projectId}/share`, {
        json: true,
        form: { accessGroupId: String(ids.accessGroupId) },
      })
    ).body.id;
    ids.notificationId = (
      await alice.call('POST', '/api/me/notifications', {
        json: true,
        form: { channel: 'EMAIL', destination: 'secret@example.com', scope: 'ALL', projectId: String(ids.projectId) },
      })
    ).body.id;
    snapshot = await aliceView();
  });
  afterAll(async () => h.close());

  it('covers a meaningful number of routes', () => {
    expect(idRoutes.length).toBeGreaterThan(30);
  });

  it.each(
    idRoutes.flatMap((spec) => {
      const forms = spec.path.startsWith('/me')
        ? [spec.path, spec.path.replace(/^\/me/, '/users/:userId')]
        : [spec.path];
      return forms.map((path) => [spec.method, path] as const);
    }),
  )('%s %s answers 404 to another user', async (method, path) => {
    const url = `/api/v2${path.replace(/:(\w+)/g, (_match, name: string) => String(ids[name]))}`;
    const answer = await bob.call(method, url, {
      json: true,
      form:
        method === 'GET'
          ? undefined
          : {
              name: 'hijack',
              mode: 'FULL_RUN',
              key: 'X',
              value: 'Y',
              displayName: 'x',
              deviceId: String(ids.deviceId),
            },
    });
    // A /me route that takes only ids of the caller's own (e.g. /me/device-groups/:groupId) must not leak either.
    expect(answer.status, `${method} ${url}`).toBe(404);
    expect(answer.text).not.toContain('Secret');
  });

  it("leaves the other user's data untouched", async () => {
    expect(await aliceView()).toBe(snapshot);
  });

  it("never lists another user's projects, runs or groups", async () => {
    const projects = await bob.call('GET', '/api/me/projects?limit=0', { json: true });
    expect(projects.body.total).toBe(0);
    const groups = await bob.call('GET', '/api/me/device-groups?withPublic=true', { json: true });
    expect(groups.body.data.map((g: { id: number }) => g.id)).not.toContain(ids.groupId);
    const filtered = await bob.call('GET', `/api/me/projects?filter=id_eq_${ids.projectId}`, { json: true });
    expect(filtered.body.total).toBe(0);
    for (const url of [
      `/api/me/runs?filter=projectId_eq_${ids.projectId}`,
      `/api/me/runs?filter=id_eq_${ids.runId}&search=Secret`,
      `/api/me/device-sessions?filter=testRunId_eq_${ids.runId}`,
      `/api/me/device-sessions?filter=id_eq_${ids.deviceRunId}&search=Pixel`,
    ]) {
      const answer = await bob.call('GET', url, { json: true });
      expect(answer.status, url).toBe(200);
      expect(answer.body.total, url).toBe(0);
    }
  });
});
