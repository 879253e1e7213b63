import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { type Harness, type TestUser, call, createHarness, parseXml } from '../support/harness.ts';

describe.each(ENGINES)('bad input (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let projectId: number;
  beforeEach(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    projectId = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'App' } })).body.id;
  });
  afterEach(async () => h.close());

  async function projectCount() {
    return (await alice.call('GET', '/api/me/projects', { json: true })).body.total;
  }

  it('answers malformed JSON with 400 in the error shape and writes nothing', async () => {
    const answer = await alice.call('POST', '/api/me/projects', { json: true, body: '{"name": "x",' });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ message: expect.stringContaining('not valid JSON'), statusCode: 400 });
    const array = await alice.call('POST', '/api/me/projects', { json: true, body: '["x"]' });
    expect(array.status).toBe(400);
    const proto = await alice.call('POST', '/api/me/projects', {
      json: true,
      body: '{"__proto__": {"admin": true}, "name": "x"}',
    });
    expect(proto.status).toBe(400);
    expect(await projectCount()).toBe(1);
  });

  it('accepts JSON bodies like form bodies, and an empty JSON body on actions', async () => {
    const created = await alice.call('POST', '/api/me/projects', {
      json: true,
      body: { name: 'From JSON', type: 'IOS' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'From JSON', type: 'IOS' });
    const reset = await alice.call('POST', '/api/me/reset-api-key', {
      json: true,
      headers: { 'content-type': 'application/json' },
      body: '',
    });
    expect(reset.status).toBe(200);
  });

  it('answers wrong types and duplicated parameters with 400 naming the parameter', async () => {
    const typed = await alice.call('POST', '/api/me/projects', { json: true, body: { name: { nested: true } } });
    expect(typed.status).toBe(400);
    expect(typed.body.message).toContain("Parameter 'name' must be string");
    const twice = await alice.call('POST', '/api/me/projects', { json: true, form: { name: ['a', 'b'] } });
    expect(twice.status).toBe(400);
    expect(twice.body.message).toContain("'name'");
    const longName = await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'x'.repeat(300) } });
    expect(longName.status).toBe(400);
    expect(longName.body.message).toContain('at most 255');
    expect(await projectCount()).toBe(1);
  });

  it.each([
    ['offset=-1', "'offset' must be >= 0"],
    ['limit=abc', "'limit' must be integer"],
    ['limit=99999999999999', "'limit' must be <= 2147483647"],
    ['offset=1e400', "'offset'"],
    ['filter=name_frobnicate_x', "Unknown filter operand 'frobnicate'"],
    ['filter=createTime_after_yesterday', 'must be a date in epoch milliseconds'],
    ['sort=name_sideways', 'must be <field>_a or <field>_d'],
  ])('answers list parameters %s with 400', async (query, message) => {
    const answer = await alice.call('GET', `/api/me/projects?${query}`, { json: true });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain(message);
  });

  it('answers non-numeric, huge and unknown ids with 404, never 500', async () => {
    for (const id of ['abc', '0', '-1', '1.5', '99999999999999999999', "1'%20OR%20'1'='1", '999999']) {
      const answer = await alice.call('GET', `/api/me/projects/${id}`, { json: true });
      expect(answer.status, id).toBe(404);
      expect(answer.body).toEqual({ message: expect.stringContaining('Project'), statusCode: 404 });
    }
    expect((await alice.call('GET', `/api/me/projects/${projectId}/runs/abc/device-runs`)).status).toBe(404);
  });

  it('answers unknown routes under /api with 404 in the negotiated shape', async () => {
    const xml = await alice.call('GET', '/api/v2/no-such-thing');
    expect(xml.status).toBe(404);
    expect(parseXml(xml.text).apiExceptionMessage).toMatchObject({ statusCode: '404' });
    const json = await call(h.app, 'GET', '/api/me/nothing-here', { json: true });
    expect(json.status).toBe(404);
    expect(json.body).toEqual({ message: expect.stringContaining('/api/me/nothing-here'), statusCode: 404 });
  });

  it('answers wrong methods with 405 and Allow', async () => {
    const answer = await alice.call('PUT', `/api/me/projects/${projectId}`, { json: true });
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, POST, DELETE');
    expect(answer.body.statusCode).toBe(405);
    const patch = await alice.call('PATCH', '/api/v2/me', { json: true });
    expect(patch.status).toBe(405);
  });

  it('answers 405 where a route of the method has a parameter in place of the path, and HEAD without a body', async () => {
    // POST /runs/:runId exists: the static path is still refused, not read as a run id.
    const post = await alice.call('POST', '/api/v2/runs/config', { json: true });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET');
    const head = await alice.call('HEAD', '/api/v2/me/reset-api-key', { json: true });
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe('POST');
    expect(head.text).toBe('');
    // Credentials are checked first, as on any route that takes them.
    const badKey = await call(h.app, 'PUT', '/api/v2/me', { json: true, key: 'not-a-key' });
    expect(badKey.status).toBe(401);
  });

  it('answers oversized bodies with 413 and unsupported media types with 415', async () => {
    const big = await alice.call('POST', '/api/me/projects', {
      json: true,
      form: { name: 'x', description: 'y'.repeat(2 * 1024 * 1024) },
    });
    expect(big.status).toBe(413);
    expect(big.body.statusCode).toBe(413);
    const text = await alice.call('POST', '/api/me/projects', {
      json: true,
      headers: { 'content-type': 'text/csv' },
      body: 'a,b',
    });
    expect(text.status).toBe(415);
    expect(await projectCount()).toBe(1);
  });

  it('keeps SQL-looking input as data', async () => {
    const name = "Robert'); DROP TABLE projects;--";
    const created = await alice.call('POST', '/api/me/projects', { json: true, form: { name } });
    expect(created.body.name).toBe(name);
    const quoted = "x' OR '1'='1";
    await alice.call('POST', '/api/me/projects', { json: true, form: { name: quoted } });
    const found = await alice.call('GET', `/api/me/projects?filter=${encodeURIComponent(`name_eq_${quoted}`)}`, {
      json: true,
    });
    expect(found.body.data.map((p: { name: string }) => p.name)).toEqual([quoted]);
    // ';' separates filter items, so this value cannot be one: a clear 400, not a query.
    const split = await alice.call('GET', `/api/me/projects?filter=${encodeURIComponent(`name_eq_${name}`)}`, {
      json: true,
    });
    expect(split.status).toBe(400);
    expect(await projectCount()).toBe(3);
  });
});
