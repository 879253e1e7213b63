/**
 * The cloud's system properties (docs/api.md#properties) on both engines: every signed-in user
 * reads them, with the list grammar the clients' maintenance banner uses; operators alone create,
 * change and remove them; bad input is a 400 naming the field; the XML answer is well-formed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { notWellFormed } from '../support/any-text.ts';
import { ENGINES } from '../support/engines.ts';
import { type Harness, START_TIME, type TestUser, createHarness, parseXml } from '../support/harness.ts';

interface ApiProperty {
  id: number;
  name: string;
  value: string | null;
  description: string | null;
  fromTime: number | null;
  toTime: number | null;
  updateTime: number;
  updatedById: number | null;
  updatedByDisplayName: string | null;
  selfURI: string;
}

describe.each(ENGINES)('system properties (%s)', (engine) => {
  let h: Harness;
  let operator: TestUser;
  let user: TestUser;

  beforeEach(async () => {
    h = await createHarness(engine);
    operator = await h.user({ role: 'ADMIN' });
    user = await h.user();
  });
  afterEach(async () => h?.close());

  const create = async (form: Record<string, string>): Promise<ApiProperty> => {
    const answer = await operator.call('POST', '/api/v2/properties', { json: true, form });
    expect(answer.status, answer.text).toBe(201);
    return answer.body;
  };

  it('lets an operator create, change and remove a property that every user reads', async () => {
    const banner = await create({
      name: 'CLOUD_HEADER_ANNOUNCEMENT',
      value: 'Maintenance on Sunday',
      description: 'The banner',
      fromTime: String(START_TIME),
      toTime: String(START_TIME + 3_600_000),
    });
    expect(banner).toMatchObject({
      name: 'CLOUD_HEADER_ANNOUNCEMENT',
      value: 'Maintenance on Sunday',
      description: 'The banner',
      fromTime: START_TIME,
      toTime: START_TIME + 3_600_000,
      updateTime: START_TIME,
      updatedById: operator.user.id,
      updatedByDisplayName: `${operator.user.firstName} ${operator.user.lastName}`,
      selfURI: `/properties/${banner.id}`,
    });

    // Any signed-in user reads it, by id and in the list; nobody signed out does.
    const read = await user.call('GET', `/api/properties/${banner.id}`, { json: true });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(banner);
    expect((await h.app.inject({ method: 'GET', url: '/api/v2/properties' })).statusCode).toBe(401);

    // Changing sends only some fields; the others stay, and the last write is recorded.
    h.advance(5_000);
    const changed = await operator.call('POST', `/api/v2/properties/${banner.id}`, {
      json: true,
      form: { value: 'Maintenance on Monday', toTime: '' },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({
      name: 'CLOUD_HEADER_ANNOUNCEMENT',
      value: 'Maintenance on Monday',
      description: 'The banner',
      fromTime: START_TIME,
      toTime: null,
      updateTime: START_TIME + 5_000,
    });

    const removed = await operator.call('DELETE', `/api/v2/properties/${banner.id}`);
    expect(removed.status).toBe(204);
    expect((await user.call('GET', `/api/properties/${banner.id}`, { json: true })).status).toBe(404);
    expect((await operator.call('DELETE', `/api/v2/properties/${banner.id}`)).status).toBe(404);
    expect(
      (await operator.call('POST', `/api/v2/properties/${banner.id}`, { json: true, form: { value: 'x' } })).status,
    ).toBe(404);
  });

  it('answers the clients’ maintenance query: the newest announcement, filtered and sorted', async () => {
    await create({ name: 'CLOUD_HEADER_ANNOUNCEMENT', value: 'old' });
    h.advance(1_000);
    await create({ name: 'OTHER', value: 'not a banner' });
    h.advance(1_000);
    const newest = await create({ name: 'CLOUD_HEADER_ANNOUNCEMENT', value: 'new' });

    const banner = await user.call(
      'GET',
      '/api/v2/properties?filter=name_eq_CLOUD_HEADER_ANNOUNCEMENT&limit=1&sort=updateTime_d',
      { json: true },
    );
    expect(banner.status, banner.text).toBe(200);
    expect(banner.body.total).toBe(2);
    expect(banner.body.data.map((property: ApiProperty) => property.id)).toEqual([newest.id]);

    const all = await user.call('GET', '/api/v2/properties?sort=name_a:id_d', { json: true });
    expect(all.body.data.map((property: ApiProperty) => property.value)).toEqual(['new', 'old', 'not a banner']);
    const searched = await user.call('GET', '/api/v2/properties?search=banner', { json: true });
    expect(searched.body.data.map((property: ApiProperty) => property.name)).toEqual(['OTHER']);

    const unknown = await user.call('GET', '/api/v2/properties?filter=secret_eq_1', { json: true });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('secret');
  });

  it('refuses writes from users who are not operators, changing nothing', async () => {
    const kept = await create({ name: 'KEPT', value: 'as it was' });
    const attempts = [
      await user.call('POST', '/api/v2/properties', { json: true, form: { name: 'MINE', value: 'x' } }),
      await user.call('POST', `/api/v2/properties/${kept.id}`, { json: true, form: { value: 'hijacked' } }),
      await user.call('DELETE', `/api/v2/properties/${kept.id}`),
      await user.call('POST', `/api/users/${user.user.id}/../../properties`, { json: true, form: { name: 'X' } }),
    ];
    for (const attempt of attempts) expect(attempt.status, attempt.text).toBe(403);
    const list = await operator.call('GET', '/api/v2/properties', { json: true });
    expect(list.body.data).toEqual([kept]);
  });

  it('answers bad input with a 400 naming the field', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ value: 'no name' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'N'.repeat(256) }, 'name'],
      [{ name: 'N', value: 'v'.repeat(4001) }, 'value'],
      [{ name: 'N', description: 'bell \u0007' }, 'description'],
      [{ name: 'N', fromTime: 'tomorrow' }, 'fromTime'],
      [{ name: 'N', toTime: '-5' }, 'toTime'],
      [{ name: 'N', fromTime: '2000', toTime: '1000' }, 'toTime'],
    ];
    for (const [form, field] of cases) {
      const answer = await operator.call('POST', '/api/v2/properties', { json: true, form });
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.body.message, JSON.stringify(form)).toContain(field);
    }
    // A change is checked against the fields it keeps: a toTime before the kept fromTime.
    const kept = await create({ name: 'WINDOW', fromTime: '2000' });
    const backwards = await operator.call('POST', `/api/v2/properties/${kept.id}`, {
      json: true,
      form: { toTime: '1000' },
    });
    expect(backwards.status).toBe(400);
    expect(backwards.body.message).toContain("'toTime'");
    expect((await operator.call('GET', '/api/v2/properties', { json: true })).body.data).toEqual([kept]);
  });

  it('answers XML from the same presenter', async () => {
    const made = await create({ name: 'XML_<&>', value: 'a "quoted" & <tagged> value' });
    const one = await user.call('GET', `/api/v2/properties/${made.id}`);
    expect(one.status).toBe(200);
    expect(notWellFormed(one.text)).toBeNull();
    expect(parseXml(one.text).apiProperty).toMatchObject({
      id: String(made.id),
      name: 'XML_<&>',
      value: 'a "quoted" & <tagged> value',
      selfURI: `/properties/${made.id}`,
    });
    const list = await user.call('GET', '/api/v2/properties');
    expect(notWellFormed(list.text)).toBeNull();
    expect(parseXml(list.text).apiList.data.apiProperty).toHaveLength(1);
  });
});
