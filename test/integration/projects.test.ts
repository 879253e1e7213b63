import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, parseXml } from '../support/harness.ts';

describe.each(ENGINES)('projects (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  beforeEach(async () => {
    h = await createHarness(engine);
    alice = await h.user();
  });
  afterEach(async () => h.close());

  async function create(name: string, extra: Record<string, string> = {}) {
    const answer = await alice.call('POST', '/api/me/projects', { json: true, form: { name, ...extra } });
    expect(answer.status).toBe(201);
    return answer.body;
  }

  it('creates a project and reads it under every path', async () => {
    const project = await create('Checkout app', { type: 'IOS', description: 'the app' });
    expect(project).toEqual({
      id: expect.any(Number),
      selfURI: `/users/${alice.user.id}/projects/${project.id}`,
      name: 'Checkout app',
      description: 'the app',
      type: 'IOS',
      osType: 'UNDEFINED',
      createTime: expect.any(Number),
      archiveTime: null,
      archivingStrategy: 'DAYS',
      archivingItemCount: 120,
      common: false,
      shared: false,
      sharedWithCaller: false,
      sharedById: null,
      sharedByEmail: null,
      readOnly: false,
      successRatio: 0,
      userId: alice.user.id,
      userEmail: alice.user.email,
      rowIndex: null,
      testRunCount: 0,
    });
    for (const url of [
      `/api/me/projects/${project.id}`,
      `/api/v2/projects/${project.id}`,
      `/api/v2/users/${alice.user.id}/projects/${project.id}`,
    ]) {
      const answer = await alice.call('GET', url, { json: true });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(project);
    }
    const xml = parseXml((await alice.call('GET', `/api/me/projects/${project.id}`)).text);
    expect(xml.apiProject).toMatchObject({ id: String(project.id), name: 'Checkout app', type: 'IOS' });
  });

  it('accepts the name in the query string, generates one when empty, and allows duplicates', async () => {
    const fromQuery = await alice.call('POST', '/api/me/projects?name=FromQuery', { json: true });
    expect(fromQuery.status).toBe(201);
    expect(fromQuery.body.name).toBe('FromQuery');
    const unnamed = await alice.call('POST', '/api/me/projects', { json: true });
    expect(unnamed.status).toBe(201);
    expect(unnamed.body.name).toMatch(/^Project 2026-01-15/);
    const again = await create('FromQuery');
    expect(again.id).not.toBe(fromQuery.body.id);
  });

  it('refuses a bad type, naming the allowed ones, and writes nothing', async () => {
    const answer = await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'x', type: 'SYMBIAN' } });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/'type' must be one of ANDROID, IOS/);
    expect((await alice.call('GET', '/api/me/projects', { json: true })).body.total).toBe(0);
  });

  it('round-trips a name full of markup through JSON and XML', async () => {
    const name = `<a&b>]]>"' \t x\r\ny`;
    const project = await create(name);
    expect(project.name).toBe(name.trim());
    const xml = (await alice.call('GET', `/api/me/projects/${project.id}`)).text;
    expect(parseXml(xml).apiProject.name).toBe(name.trim());
    const listed = parseXml((await alice.call('GET', '/api/me/projects')).text);
    expect(listed.apiList.data.apiProject[0].name).toBe(name.trim());
  });

  it('refuses control characters that XML cannot carry', async () => {
    const answer = await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'bell\u0007' } });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain("'name' must not contain control characters");
  });

  it('updates and deletes, removing the runs with it', async () => {
    const project = await create('Old');
    const updated = await alice.call('POST', `/api/me/projects/${project.id}`, {
      json: true,
      form: { name: 'New', archivingStrategy: 'runs', archivingItemCount: '5' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'New', archivingStrategy: 'RUNS', archivingItemCount: 5 });
    const device = await fixtures.device(h.ctx, 'Pixel');
    const run = await fixtures.run(h.ctx, alice.user, project.id, [device], ['SUCCEEDED']);

    const deleted = await alice.call('DELETE', `/api/v2/projects/${project.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await alice.call('GET', `/api/me/projects/${project.id}`)).status).toBe(404);
    expect((await alice.call('GET', `/api/v2/runs/${run.id}`)).status).toBe(404);
    expect(await h.ctx.store.deviceRuns.ofRuns([run.id])).toEqual([]);
  });

  describe('listing', () => {
    it('answers the list envelope with paging links that repeat search, sort and filter', async () => {
      for (let i = 1; i <= 5; i++) {
        h.advance(1000);
        await create(`Project ${i}`);
      }
      const first = await alice.call(
        'GET',
        '/api/me/projects?limit=2&sort=createTime_a&filter=name_contains_project&search=proj',
        { json: true },
      );
      expect(first.status).toBe(200);
      expect(Object.keys(first.body)).toEqual([
        'selfURI',
        'data',
        'limit',
        'next',
        'offset',
        'previous',
        'search',
        'sort',
        'total',
        'empty',
      ]);
      expect(first.body).toMatchObject({
        selfURI: '/me/projects',
        limit: 2,
        offset: 0,
        previous: null,
        search: 'proj',
        sort: 'createTime_a',
        total: 5,
        empty: false,
      });
      expect(first.body.data.map((p: { name: string }) => p.name)).toEqual(['Project 1', 'Project 2']);
      const next = new URL(first.body.next);
      expect(next.origin + next.pathname).toBe('http://localhost:80/api/me/projects'.replace(':80', ''));
      expect(Object.fromEntries(next.searchParams)).toEqual({
        offset: '2',
        limit: '2',
        search: 'proj',
        sort: 'createTime_a',
        filter: 'name_contains_project',
      });

      const second = await alice.call('GET', `${next.pathname}${next.search}`, { json: true });
      expect(second.body.data.map((p: { name: string }) => p.name)).toEqual(['Project 3', 'Project 4']);
      expect(second.body.previous).toContain('offset=0');
      const last = await alice.call('GET', '/api/me/projects?limit=2&offset=4&sort=createTime_a', { json: true });
      expect(last.body.next).toBeNull();
      expect(last.body.data).toHaveLength(1);

      const all = await alice.call('GET', '/api/me/projects?limit=0', { json: true });
      expect(all.body).toMatchObject({ total: 5, next: null, limit: 0 });
      expect(all.body.data[0].name).toBe('Project 5');
    });

    it('searches case-insensitively with whitespace as wildcard, and filters and sorts', async () => {
      await create('My Android Device Lab');
      await create('my other device');
      await create('Unrelated');
      const found = await alice.call('GET', `/api/me/projects?search=${encodeURIComponent('my  DEVICE')}&sort=name_a`, {
        json: true,
      });
      expect(found.body.data.map((p: { name: string }) => p.name)).toEqual([
        'My Android Device Lab',
        'my other device',
      ]);
      const filtered = await alice.call('GET', '/api/me/projects?filter=s_name_eq_Unrelated', { json: true });
      expect(filtered.body.data.map((p: { name: string }) => p.name)).toEqual(['Unrelated']);
      const notIn = await alice.call(
        'GET',
        `/api/me/projects?filter=${encodeURIComponent('name_notin_Unrelated|my other device')}`,
        { json: true },
      );
      expect(notIn.body.data.map((p: { name: string }) => p.name)).toEqual(['My Android Device Lab']);
      const sqlish = await alice.call('GET', `/api/me/projects?search=${encodeURIComponent("%' OR 1=1 --")}`, {
        json: true,
      });
      expect(sqlish.status).toBe(200);
      expect(sqlish.body.total).toBe(0);
    });

    it('embeds the newest runs and their device runs in a fixed number of statements', async () => {
      const devices = [await fixtures.device(h.ctx, 'Pixel 8'), await fixtures.device(h.ctx, 'Galaxy S24')];
      const count = async (projects: number) => {
        for (let p = 0; p < projects; p++) {
          const project = await create(`P${p}`);
          for (let r = 0; r < 3; r++) {
            h.advance(10);
            await fixtures.run(h.ctx, alice.user, project.id, devices, ['SUCCEEDED', 'FAILED'], {
              testCases: { passed: 3, failed: 1 },
            });
          }
        }
        h.queries.length = 0;
        const answer = await alice.call('GET', '/api/me/projects?limit=0', { json: true });
        expect(answer.status).toBe(200);
        return { statements: h.queries.length, body: answer.body };
      };
      const small = await count(1);
      const large = await count(6);
      expect(large.body.total).toBe(7);
      expect(large.statements).toBe(small.statements);

      const project = large.body.data[0];
      expect(project.testRunCount).toBe(3);
      expect(project.successRatio).toBe(0.5);
      expect(project.testRuns).toHaveLength(3);
      const [newest] = project.testRuns;
      expect(newest).toMatchObject({
        number: 3,
        displayName: 'Test Run 3',
        state: 'FINISHED',
        deviceCount: 2,
        succeededDeviceCount: 1,
        failedDeviceCount: 1,
        testCaseCount: 8,
      });
      expect(newest.deviceRuns.map((d: { runStatus: string }) => d.runStatus)).toEqual(['SUCCEEDED', 'FAILED']);
      expect(newest.deviceRuns[0].device.displayName).toBe('Pixel 8');

      const embedOne = await alice.call('GET', '/api/me/projects?embedRuns=1', { json: true });
      expect(embedOne.body.data[0].testRuns).toHaveLength(1);
      expect(embedOne.body.data[0].testRunCount).toBe(3);
      expect((await alice.call('GET', '/api/me/projects?embedRuns=101', { json: true })).status).toBe(400);
    });

    it('lists embedded runs in XML with typed wrapper elements', async () => {
      const device = await fixtures.device(h.ctx, 'Pixel');
      const project = await create('X');
      await fixtures.run(h.ctx, alice.user, project.id, [device], ['WAITING']);
      const xml = parseXml((await alice.call('GET', '/api/me/projects')).text);
      const run = xml.apiList.data.apiProject[0].testRuns.apiTestRun;
      expect(run).toMatchObject({ state: 'WAITING', deviceCount: '1' });
      expect(run.deviceRuns.apiDeviceRun).toMatchObject({ runStatus: 'WAITING', device: { displayName: 'Pixel' } });
    });

    it('refuses unknown filter and sort fields with 400 naming them', async () => {
      const badFilter = await alice.call('GET', '/api/me/projects?filter=password_eq_x', { json: true });
      expect(badFilter.status).toBe(400);
      expect(badFilter.body.message).toContain("Unknown filter field 'password'");
      const badSort = await alice.call('GET', '/api/me/projects?sort=password_d');
      expect(badSort.status).toBe(400);
      expect(parseXml(badSort.text).apiExceptionMessage.message).toContain("Unknown sort field 'password'");
    });
  });
});
