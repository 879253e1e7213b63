/**
 * Polling clients get 304 Not Modified while an answer has not changed (docs/api.md#conditional-requests),
 * after authentication and authorization as any request, and a new ETag once it has.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { createHarness, type Harness, type TestUser } from '../support/harness.ts';

describe.each(ENGINES)('conditional requests (%s)', (engine) => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;
  let url: string;

  beforeAll(async () => {
    h = await createHarness(engine);
    owner = await h.user();
    other = await h.user();
    const project = (await owner.call('POST', '/api/me/projects', { json: true, form: { name: 'Polled' } })).body;
    const device = await fixtures.device(h.ctx, 'Polled device');
    const run = await fixtures.run(h.ctx, owner.user, project.id, [device], ['RUNNING']);
    url = `/api/v2/runs/${run.id}`;
  });
  afterAll(() => h.close());

  it('answers 304 with no body while the run is unchanged, and the new state with a new ETag after', async () => {
    const first = await owner.call('GET', url, { json: true });
    expect(first.status).toBe(200);
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^"[^"]+"$/);
    expect(first.headers.vary).toMatch(/Accept/);

    const again = await owner.call('GET', url, { json: true, headers: { 'if-none-match': tag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.etag).toBe(tag);

    const renamed = await owner.call('POST', `${url}/abort`, { json: true });
    expect(renamed.status).toBe(200);
    const changed = await owner.call('GET', url, { json: true, headers: { 'if-none-match': tag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(tag);
    expect(changed.body.id).toBe(first.body.id);
  });

  it('gives the XML answer of the same record its own ETag', async () => {
    const json = await owner.call('GET', url, { json: true });
    const xml = await owner.call('GET', url);
    expect(xml.text.startsWith('<?xml')).toBe(true);
    expect(xml.headers.etag).not.toBe(json.headers.etag);
    const stale = await owner.call('GET', url, { headers: { 'if-none-match': json.headers.etag as string } });
    expect(stale.status).toBe(200);
  });

  it("answers another user's run 404 even with its current ETag", async () => {
    const tag = (await owner.call('GET', url, { json: true })).headers.etag as string;
    const foreign = await other.call('GET', url, { json: true, headers: { 'if-none-match': tag } });
    expect(foreign.status).toBe(404);
    const anonymous = await h.app.inject({ method: 'GET', url, headers: { 'if-none-match': tag } });
    expect(anonymous.statusCode).toBe(401);
  });
});
