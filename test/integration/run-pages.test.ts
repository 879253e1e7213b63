import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

/**
 * A project's runs listed with no filter, search or sort (how CI polls) take prepared statements
 * (store/sql.ts plainPages); every paging of them must answer what the general path answers.
 */
describe.each(ENGINES)("pages of a project's runs (%s)", (engine) => {
  let h: Harness;
  let alice: TestUser;
  let projectId: number;
  beforeEach(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    projectId = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'App' } })).body.id;
    const device = await fixtures.device(h.ctx, 'Pixel 8');
    for (let i = 1; i <= 5; i++) {
      await fixtures.run(h.ctx, alice.user, projectId, [device], ['SUCCEEDED'], { name: `Run ${i}` });
      h.advance(1000);
    }
  });
  afterEach(async () => h.close());

  const names = async (query: string) => {
    const answer = await alice.call('GET', `/api/me/projects/${projectId}/runs${query}`, { json: true });
    expect(answer.status).toBe(200);
    return { total: answer.body.total, names: answer.body.data.map((run: { displayName: string }) => run.displayName) };
  };

  it('answers every paging as the general path does, newest first', async () => {
    const all = ['Run 5', 'Run 4', 'Run 3', 'Run 2', 'Run 1'];
    expect(await names('')).toEqual({ total: 5, names: all });
    expect(await names('?limit=0')).toEqual({ total: 5, names: all });
    expect(await names('?limit=2')).toEqual({ total: 5, names: ['Run 5', 'Run 4'] });
    expect(await names('?limit=2&offset=2')).toEqual({ total: 5, names: ['Run 3', 'Run 2'] });
    expect(await names('?limit=0&offset=3')).toEqual({ total: 5, names: ['Run 2', 'Run 1'] });
    expect(await names('?offset=9')).toEqual({ total: 5, names: [] });
    // The general path, with a sort given: the same order.
    expect(await names('?sort=createTime_d&limit=2&offset=2')).toEqual({ total: 5, names: ['Run 3', 'Run 2'] });
  });

  it("keeps each project's runs to itself", async () => {
    const other = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Other' } })).body.id;
    const answer = await alice.call('GET', `/api/me/projects/${other}/runs`, { json: true });
    expect(answer.body).toMatchObject({ total: 0, data: [] });
    expect((await names('?limit=1')).names).toEqual(['Run 5']);
  });
});
