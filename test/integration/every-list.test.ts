/**
 * Every list route takes the whole list grammar (docs/api.md#lists) on every field its items show:
 * this walks the route table, so a list added without a spec, or a field shown but not filterable,
 * fails here. For each list: an unknown filter or sort field is a 400 naming it (JSON and XML),
 * sorting orders the items, paging slices the sorted list, and filtering on each scalar field's
 * value keeps the item that has it, its negation (`noteq`) all the others.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from '../../src/api/app.ts';
import type { RouteSpec } from '../../src/api/route.ts';
import { adminRoutes } from '../../src/api/routes/admin.ts';
import { FILE_LIST } from '../../src/domain/files.ts';
import { evaluateList } from '../../src/domain/list-eval.ts';
import { parseListQuery } from '../../src/domain/list-query.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, createHarness, parseXml } from '../support/harness.ts';
import { type World, fillPath, seedWorld } from '../support/world.ts';

const ROUTES: readonly RouteSpec[] = [...routeTable({ version: 'test', flavour: 'private' }), ...adminRoutes];
const LISTS = ROUTES.filter((route) => route.method === 'GET' && route.list !== undefined);

/**
 * Lists that have nothing to show in the world: no live connections
 * (docs/api.md#steps-and-data-availability), and no flaky test (a test that passed and failed on
 * one build needs test case results the world does not seed: flaky-tests.test.ts walks its fields),
 * and no device screen (the world's sessions are finished or waiting, none running:
 * device-screens.test.ts walks its fields).
 */
const ALWAYS_EMPTY = /\/connections$|\/flaky-tests$|\/device-screens$/;

type Item = Record<string, unknown>;
type Scalar = string | number | boolean;

const isScalar = (value: unknown): value is Scalar =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/** The order the store sorts in: nulls first, text without case. */
function ascending(a: unknown, b: unknown): number {
  const x = isScalar(a) ? (typeof a === 'string' ? a.toLowerCase() : a) : null;
  const y = isScalar(b) ? (typeof b === 'string' ? b.toLowerCase() : b) : null;
  if (x === null || y === null) return x === y ? 0 : x === null ? -1 : 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** How a field's value is written in a filter that matches it exactly, or null when it cannot be. */
function equalsFilter(field: string, value: Scalar): string | null {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) return null;
  const text = String(value);
  if (text.includes(';') || text === '') return null;
  return `${field}_eq_${text}`;
}

it('declares a list spec on every route that answers a list', () => {
  const answersList = (route: RouteSpec) => {
    const schema = route.answers[200] as { xml?: { name?: string } } | undefined;
    return schema?.xml?.name === 'apiList';
  };
  const undeclared = ROUTES.filter((route) => answersList(route) && route.list === undefined);
  expect(undeclared.map((route) => `${route.method} ${route.path}`)).toEqual([]);
  expect(LISTS.length).toBeGreaterThan(20);
});

describe.each(ENGINES)('every list route takes the list grammar (%s)', (engine) => {
  let h: Harness;
  let world: World;
  let agent: FakeAgent;

  beforeAll(async () => {
    h = await createHarness(engine);
    world = await seedWorld(h, { role: 'ADMIN' });
    agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1', 'Pixel 8')]);
    // A second of what the world has one of, so that sorting and paging have something to order.
    await fixtures.device(h.ctx, 'Another device');
    await world.user.call('POST', '/api/me/projects', { form: { name: 'Second project' } });
    await world.user.call('POST', '/api/properties', { form: { name: 'SECOND_PROPERTY', value: 'v2', fromTime: '5' } });
    // Test cases and steps of the finished session, steps of the recording.
    const session = world.ids.deviceSessionId!;
    await h.ctx.store.results.insertTestCases(session, [
      {
        suiteName: 'S',
        className: 'a.B',
        methodName: 'one',
        duration: 5,
        result: 'PASSED',
        errorMessage: null,
        stacktrace: null,
      },
      {
        suiteName: null,
        className: 'a.C',
        methodName: 'two',
        duration: 7,
        result: 'FAILED',
        errorMessage: 'no',
        stacktrace: 'at',
      },
    ]);
    await h.ctx.store.deviceRuns.appendStep(session, 'INSTALL', h.ctx.clock());
    await h.ctx.store.deviceRuns.appendStep(session, 'RUNNING', h.ctx.clock() + 1000);
    for (const target of ['one', 'two'])
      await world.user.call('POST', `/api/me/recordings/${world.ids.recordingId}/steps`, {
        form: { action: 'TAP', target },
      });
  }, 60_000);
  afterAll(async () => h?.close());

  const get = (url: string) => world.user.call('GET', url, { json: true });
  const query = (url: string, params: Record<string, string>) => `${url}?${new URLSearchParams(params)}`;

  it.each(LISTS.map((route) => [route.path, route] as const))('%s', async (_path, route) => {
    const url = `/api/v2${fillPath(route.path, world.ids)}`;
    const fields = route.list!.spec.fields as Record<string, unknown>;

    const all = await get(query(url, { limit: '0' }));
    expect(all.status, `${url}: ${all.text}`).toBe(200);
    const items = all.body.data as Item[];
    expect(all.body.total).toBe(items.length);

    // (a) An unknown field is a 400 naming it, in JSON and in XML; so is an unknown sort field.
    const unknown = await get(query(url, { filter: 'noSuchField_eq_1' }));
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain("'noSuchField'");
    const unknownXml = await world.user.call('GET', query(url, { filter: 's_noSuchField_eq_1' }));
    expect(unknownXml.status).toBe(400);
    expect(parseXml(unknownXml.text).apiExceptionMessage.message).toContain("'noSuchField'");
    expect((await get(query(url, { sort: 'noSuchField_a' }))).status).toBe(400);
    // A field shown but not filterable (a link, a nested list) is a 400 that says why, never ignored.
    for (const field of route.list!.shownOnly) {
      const refused = await get(query(url, { filter: `${field}_isnull` }));
      expect(refused.status, `${url}?filter=${field}_isnull`).toBe(400);
      expect(refused.body.message).toContain(
        `Field '${field}' of ${route.list!.spec.entity} cannot be used in filter: `,
      );
      const unsorted = await get(query(url, { sort: `${field}_a` }));
      expect(unsorted.status, `${url}?sort=${field}_a`).toBe(400);
      expect(unsorted.body.message).toContain(`'${field}'`);
    }

    // (b) Each field sorts both ways; paging slices the sorted list.
    const sample = items[0];
    for (const field of Object.keys(fields)) {
      const up = await get(query(url, { limit: '0', sort: `${field}_a` }));
      expect(up.status, `sort ${field}: ${up.text}`).toBe(200);
      const values = (up.body.data as Item[]).map((item) => item[field]);
      expect(values, `${url} sorted by ${field}`).toEqual([...values].sort(ascending));
      const down = await get(query(url, { limit: '0', sort: `${field}_d` }));
      const downValues = (down.body.data as Item[]).map((item) => item[field]);
      expect(downValues, `${url} sorted by ${field} descending`).toEqual([...values].sort(ascending).reverse());
    }
    if (items.length >= 2) {
      const key = fields.id === undefined ? Object.keys(fields)[0]! : 'id';
      const sorted = (await get(query(url, { limit: '0', sort: `${key}_d` }))).body.data as Item[];
      const second = await get(query(url, { limit: '1', offset: '1', sort: `${key}_d` }));
      expect(second.body).toMatchObject({ total: items.length, limit: 1, offset: 1 });
      expect(second.body.data).toEqual([{ ...sorted[1], ...('rowIndex' in sorted[1]! && { rowIndex: 1 }) }]);
      expect(second.body.next === null).toBe(items.length <= 2);
      expect(second.body.previous).toContain('offset=0');
    }

    // (c) Every scalar field the items show is in the spec, and filtering on its value keeps the item.
    if (ALWAYS_EMPTY.test(route.path)) return;
    expect(sample, `${url} lists nothing in the world: seed something it lists`).toBeDefined();
    const shown = Object.entries(sample!).filter(([, value]) => value === null || isScalar(value));
    const shownOnly = new Set([...route.list!.shownOnly, 'rowIndex']);
    const missing = shown
      .map(([field]) => field)
      .filter((field) => fields[field] === undefined && !shownOnly.has(field));
    expect(missing, `${url}: fields shown but not filterable`).toEqual([]);
    for (const [field, value] of shown) {
      if (!isScalar(value) || shownOnly.has(field)) continue;
      const filter = equalsFilter(field, value);
      if (filter === null) continue;
      const answer = await get(query(url, { limit: '0', filter }));
      expect(answer.status, `${url}?filter=${filter}: ${answer.text}`).toBe(200);
      const found = (answer.body.data as Item[]).map((item) => item[field]);
      expect(found.length, `${url}?filter=${filter}`).toBeGreaterThan(0);
      expect(
        found.every((other) => other === value),
        `${url}?filter=${filter}`,
      ).toBe(true);
      // Its negation keeps every other item: the two split the list.
      const negation = filter.replace('_eq_', '_noteq_');
      const rest = await get(query(url, { limit: '0', filter: negation }));
      expect(rest.status, `${url}?filter=${negation}: ${rest.text}`).toBe(200);
      const others = (rest.body.data as Item[]).map((item) => item[field]);
      expect(found.length + others.length, `${url}?filter=${negation}`).toBe(items.length);
      expect(others, `${url}?filter=${negation}`).not.toContain(value);
    }
  });

  it('pages a stored list as the in-memory evaluator pages the same records', async () => {
    // /me/files is filtered in SQL; domain/list-eval.ts must agree with it on the same items.
    for (const name of ['Alpha one', 'alpha two', 'beta', '100% done', 'under_score'])
      await fixtures.file(h.ctx, world.user.user, { name, inputType: 'DATA', bytes: name });
    const all = (await get('/api/v2/me/files?limit=0')).body.data as Item[];
    expect(all.length).toBeGreaterThan(8);
    const cases: Array<Record<string, string>> = [
      { filter: 'name_like_alpha%' },
      { filter: 'name_notlike_%.apk' },
      { filter: 'name_contains_%' },
      { filter: 'name_like_under\\_%' },
      { filter: 'name_contains__' },
      { filter: 'inputType_noteq_DATA' },
      { filter: 'inputType_in_TEST|APPLICATION' },
      { filter: 'name_empty' },
      { filter: 'n_size_gt_8;size_lt_12' },
      { filter: 'b_duplicate_eq_false', sort: 'size_d' },
      { sort: 'size_a:id_d', offset: '2', limit: '3' },
      { sort: 'createTime_a', offset: '1', limit: '4' },
      { search: 'ALPHA o' },
      { search: '100%' },
    ];
    for (const params of cases) {
      const stored = await get(query('/api/v2/me/files', params));
      expect(stored.status, JSON.stringify(params)).toBe(200);
      const evaluated = evaluateList(all, parseListQuery(params, FILE_LIST), ['name']);
      expect(
        { total: stored.body.total, ids: (stored.body.data as Item[]).map((item) => item.id) },
        JSON.stringify(params),
      ).toEqual({ total: evaluated.total, ids: evaluated.items.map((item) => item.id) });
    }
  });
});
