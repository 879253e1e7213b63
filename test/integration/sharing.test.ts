/**
 * Sharing (docs/api.md#sharing): what a sharee may do with a shared project and device group,
 * directly and through an access group; that unsharing, leaving a group and deleting it revoke at
 * once; that nobody else sees anything; and that bad input is a 4xx naming the parameter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

/** The server-side Appium framework: a run of it needs an app and a test package. */
const SERVER_SIDE = 7;

describe.each(ENGINES)('sharing (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let admin: TestUser;
  let projectId: number;
  let runId: number;
  let deviceRunId: number;
  let groupId: number;

  const form = (values: Record<string, string>) => ({ json: true, form: values });

  beforeAll(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    bob = await h.user();
    carol = await h.user();
    dave = await h.user();
    admin = await h.user({ role: 'ADMIN' });
    const device = await fixtures.device(h.ctx, 'Shared Pixel');
    projectId = (await alice.call('POST', '/api/me/projects', form({ name: 'Shared project' }))).body.id;
    const run = await fixtures.run(h.ctx, alice.user, projectId, [device], ['SUCCEEDED']);
    runId = run.id;
    deviceRunId = (await h.ctx.store.deviceRuns.ofRuns([run.id]))[0]!.id;
    groupId = (
      await alice.call('POST', '/api/me/device-groups', form({ displayName: 'Shared group', osType: 'ANDROID' }))
    ).body.id;
    await alice.call('POST', `/api/me/device-groups/${groupId}/devices`, form({ deviceId: String(device.id) }));
  });
  afterAll(async () => h?.close());

  /** What a user can read of Alice's project: the statuses of the reads a sharee is allowed. */
  async function reads(user: TestUser): Promise<number[]> {
    const urls = [
      `/api/me/projects/${projectId}`,
      `/api/me/projects/${projectId}/runs`,
      `/api/me/projects/${projectId}/runs/${runId}`,
      `/api/me/projects/${projectId}/runs/${runId}/device-sessions`,
      `/api/me/device-sessions/${deviceRunId}`,
      `/api/me/device-sessions/${deviceRunId}/output-file-set/files`,
    ];
    return Promise.all(urls.map(async (url) => (await user.call('GET', url, { json: true })).status));
  }

  const listed = async (user: TestUser) =>
    ((await user.call('GET', '/api/me/projects?limit=0', { json: true })).body.data as Array<{ id: number }>).map(
      (project) => project.id,
    );

  it('shares a project with a user by e-mail, who may read it and its results but not change it', async () => {
    expect(await reads(bob)).toEqual([404, 404, 404, 404, 404, 404]);
    const shared = await alice.call('POST', `/api/me/projects/${projectId}/share`, form({ email: bob.user.email }));
    expect(shared.status).toBe(200);
    expect(shared.body).toMatchObject({ type: 'PROJECT', resourceId: projectId, name: 'Shared project' });
    const again = await alice.call('POST', `/api/me/projects/${projectId}/share`, form({ email: bob.user.email }));
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(shared.body.id);

    expect(await reads(bob)).toEqual([200, 200, 200, 200, 200, 200]);
    const project = (await bob.call('GET', '/api/me/projects?limit=0', { json: true })).body.data.find(
      (item: { id: number }) => item.id === projectId,
    );
    expect(project).toMatchObject({
      shared: true,
      sharedWithCaller: true,
      sharedById: alice.user.id,
      sharedByEmail: alice.user.email,
      userId: alice.user.id,
      userEmail: alice.user.email,
    });
    const own = await alice.call('GET', `/api/me/projects/${projectId}`, { json: true });
    expect(own.body).toMatchObject({ shared: true, sharedWithCaller: false, sharedById: null, sharedByEmail: null });

    // Changing, deleting, running and sharing further stay the owner's: 404, as for any project not theirs.
    const forbidden: Array<[string, string, Record<string, string>?]> = [
      ['POST', `/api/me/projects/${projectId}`, { name: 'taken over' }],
      ['DELETE', `/api/me/projects/${projectId}`],
      ['POST', `/api/me/projects/${projectId}/share`, { email: dave.user.email }],
      ['GET', `/api/me/projects/${projectId}/config`],
      ['DELETE', `/api/me/projects/${projectId}/runs/${runId}`],
      ['POST', `/api/me/projects/${projectId}/runs/${runId}/abort`, {}],
      ['POST', `/api/me/projects/${projectId}/runs`, { osType: 'ANDROID' }],
    ];
    for (const [method, url, values] of forbidden) {
      const answer = await bob.call(method, url, values === undefined ? { json: true } : form(values));
      expect(answer.status, `${method} ${url}`).toBe(404);
    }
    expect((await alice.call('GET', `/api/me/projects/${projectId}`, { json: true })).body.name).toBe('Shared project');

    // Nobody else sees it.
    expect(await reads(dave)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(await listed(dave)).not.toContain(projectId);

    // Unsharing closes it at once.
    const unshared = await alice.call(
      'DELETE',
      `/api/me/projects/${projectId}/share?email=${encodeURIComponent(bob.user.email)}`,
      { json: true },
    );
    expect(unshared.status).toBe(204);
    expect(await reads(bob)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(await listed(bob)).not.toContain(projectId);
    expect((await alice.call('GET', `/api/me/projects/${projectId}`, { json: true })).body.shared).toBe(false);
  });

  it('shares through an access group, and leaving or deleting the group revokes', async () => {
    const group = await alice.call('POST', '/api/me/access-groups', form({ name: 'Testers', scope: 'ACCOUNT' }));
    expect(group.status).toBe(201);
    expect(group.body).toMatchObject({ name: 'Testers', scope: 'ACCOUNT', userId: alice.user.id });
    const accessGroupId = group.body.id as number;
    const member = await alice.call(
      'POST',
      `/api/me/access-groups/${accessGroupId}/users`,
      form({ email: carol.user.email.toUpperCase() }),
    );
    expect(member.status).toBe(200);
    expect(member.body).toMatchObject({ id: carol.user.id, email: carol.user.email });
    expect(Object.keys(member.body)).not.toContain('apiKey');

    const shared = await alice.call(
      'POST',
      `/api/me/projects/${projectId}/share`,
      form({ accessGroupId: String(accessGroupId) }),
    );
    expect(shared.status).toBe(200);
    expect(await reads(carol)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await reads(dave)).toEqual([404, 404, 404, 404, 404, 404]);

    const resources = await alice.call('GET', `/api/me/access-groups/${accessGroupId}/resources`, { json: true });
    expect(resources.body.data).toEqual([
      expect.objectContaining({ id: shared.body.id, type: 'PROJECT', resourceId: projectId }),
    ]);
    const users = await alice.call('GET', `/api/me/access-groups/${accessGroupId}/users`, { json: true });
    expect(users.body.data.map((user: { id: number }) => user.id)).toEqual([carol.user.id]);

    // The group is its owner's: its member sees what it shares, not the group.
    for (const url of [
      `/api/me/access-groups/${accessGroupId}`,
      `/api/me/access-groups/${accessGroupId}/users`,
      `/api/me/access-groups/${accessGroupId}/resources/${shared.body.id}`,
    ])
      expect((await carol.call('GET', url, { json: true })).status, url).toBe(404);

    // Out of the group: nothing; back in: it is there again.
    const removed = await alice.call('DELETE', `/api/me/access-groups/${accessGroupId}/users/${carol.user.id}`, {
      json: true,
    });
    expect(removed.status).toBe(204);
    expect(await reads(carol)).toEqual([404, 404, 404, 404, 404, 404]);
    await alice.call('POST', `/api/me/access-groups/${accessGroupId}/users`, form({ email: carol.user.email }));
    expect(await reads(carol)).toEqual([200, 200, 200, 200, 200, 200]);

    // The group's resource removed: unshared.
    const unshared = await alice.call('DELETE', `/api/me/access-groups/${accessGroupId}/resources/${shared.body.id}`, {
      json: true,
    });
    expect(unshared.status).toBe(204);
    expect(await reads(carol)).toEqual([404, 404, 404, 404, 404, 404]);

    // Shared again, then the group deleted: unshared, and the project's flag follows.
    await alice.call('POST', `/api/me/projects/${projectId}/share`, form({ accessGroupId: String(accessGroupId) }));
    expect(await reads(carol)).toEqual([200, 200, 200, 200, 200, 200]);
    expect((await alice.call('DELETE', `/api/me/access-groups/${accessGroupId}`, { json: true })).status).toBe(204);
    expect(await reads(carol)).toEqual([404, 404, 404, 404, 404, 404]);
    expect((await alice.call('GET', `/api/me/projects/${projectId}`, { json: true })).body.shared).toBe(false);
  });

  it('shares a device group: the sharee may see and use it, not change or share it', async () => {
    const shared = await alice.call('POST', `/api/device-groups/${groupId}/share`, form({ email: bob.user.email }));
    expect(shared.status).toBe(200);
    expect(shared.body).toMatchObject({ type: 'DEVICE_GROUP', resourceId: groupId, name: 'Shared group' });
    const groups = await bob.call('GET', '/api/me/device-groups', { json: true });
    expect(groups.body.data).toEqual([
      expect.objectContaining({ id: groupId, shared: true, userEmail: alice.user.email }),
    ]);
    expect((await bob.call('GET', `/api/me/device-groups/${groupId}/devices`, { json: true })).status).toBe(200);
    for (const [method, url, values] of [
      ['POST', `/api/me/device-groups/${groupId}`, { displayName: 'mine now' }],
      ['DELETE', `/api/me/device-groups/${groupId}`, undefined],
      ['POST', `/api/me/device-groups/${groupId}/share`, { email: dave.user.email }],
    ] as const) {
      const answer = await bob.call(method, url, values === undefined ? { json: true } : form(values));
      expect(answer.status, `${method} ${url}`).toBe(404);
    }
    expect((await dave.call('GET', `/api/me/device-groups/${groupId}`, { json: true })).status).toBe(404);
    // The sharee runs on it, in a project of their own; a stranger cannot name it.
    const start = async (user: TestUser) => {
      const app = await fixtures.file(h.ctx, user.user, {
        name: 'app.apk',
        inputType: 'APPLICATION',
        osType: 'ANDROID',
        properties: { package_name: 'com.example' },
      });
      const tests = await fixtures.file(h.ctx, user.user, {
        name: 'tests.zip',
        inputType: 'TEST',
        properties: { entry_script: 'run-tests.sh' },
      });
      return user.call('POST', '/api/v2/runs', {
        json: true,
        body: {
          osType: 'ANDROID',
          frameworkId: SERVER_SIDE,
          projectName: 'Mine',
          deviceGroupId: groupId,
          files: [
            { id: app.id, action: 'INSTALL' },
            { id: tests.id, action: 'RUN_TEST' },
          ],
        },
      });
    };
    const run = await start(bob);
    expect(run.status, run.text).toBeLessThan(300);
    const config = await bob.call('GET', `/api/me/runs/${run.body.id}/config`, { json: true });
    expect(config.body.usedDeviceGroupId).toBe(groupId);
    expect((await start(dave)).status).toBe(404);
    const unshared = await alice.call(
      'DELETE',
      `/api/me/device-groups/${groupId}/share?email=${encodeURIComponent(bob.user.email)}`,
      { json: true },
    );
    expect(unshared.status).toBe(204);
    expect((await bob.call('GET', `/api/me/device-groups/${groupId}`, { json: true })).status).toBe(404);
    expect((await bob.call('GET', '/api/me/device-groups', { json: true })).body.data).toEqual([]);
  });

  it('answers bad input with a 4xx naming the parameter', async () => {
    const daveGroup = (await dave.call('POST', '/api/me/access-groups', form({ name: 'Dave only' }))).body.id;
    const share = `/api/me/projects/${projectId}/share`;
    const cases: Array<[string, string, Record<string, string>, number, RegExp]> = [
      ['POST', share, {}, 400, /email/],
      ['POST', share, { email: 'nobody@example.com' }, 400, /nobody@example\.com/],
      ['POST', share, { email: 'not an address' }, 400, /e-mail/],
      ['POST', share, { email: alice.user.email }, 400, /your own/],
      ['POST', share, { email: bob.user.email, accessGroupId: '1' }, 400, /either/],
      ['POST', share, { accessGroupId: 'abc' }, 400, /accessGroupId/],
      ['POST', share, { accessGroupId: String(daveGroup) }, 404, /Access group/],
      ['DELETE', `${share}?email=${encodeURIComponent(dave.user.email)}`, {}, 404, /Shared resource/],
      ['POST', '/api/me/access-groups', {}, 400, /name/],
      ['POST', '/api/me/access-groups', { name: 'g', scope: 'GLOBAL' }, 400, /scope/],
      ['POST', '/api/me/access-groups', { name: 'g', scope: 'TEAM' }, 400, /scope/],
    ];
    for (const [method, url, values, status, message] of cases) {
      const answer = await alice.call(method, url, method === 'GET' ? { json: true } : form(values));
      expect(answer.status, `${method} ${url} ${JSON.stringify(values)}`).toBe(status);
      expect(answer.body).toMatchObject({ statusCode: status });
      expect(answer.body.message).toMatch(message);
    }
    const xml = await alice.call('POST', share, { form: {}, headers: { accept: 'application/xml' } });
    expect(xml.status).toBe(400);
    expect(xml.text).toMatch(/<apiExceptionMessage>[\s\S]*email/);
  });

  it("lists every user's access groups to operators only", async () => {
    await bob.call('POST', '/api/me/access-groups', form({ name: "Bob's group" }));
    const all = await admin.call('GET', '/api/access-groups?limit=0', { json: true });
    expect(all.status).toBe(200);
    expect(all.body.data.map((group: { name: string }) => group.name)).toContain("Bob's group");
    expect((await bob.call('GET', '/api/access-groups', { json: true })).status).toBe(403);
    const own = await dave.call('GET', '/api/me/access-groups', { json: true });
    expect(own.body.data.map((group: { name: string }) => group.name)).not.toContain("Bob's group");
  });
});
