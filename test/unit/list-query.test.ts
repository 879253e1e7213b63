import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../src/domain/errors.ts';
import { type ListSpec, parseListQuery, searchPattern } from '../../src/domain/list-query.ts';

const SPEC: ListSpec<'id' | 'name' | 'createTime' | 'state' | 'online' | 'ratio'> = {
  entity: 'things',
  fields: {
    id: { type: 'number' },
    name: { type: 'string' },
    createTime: { type: 'date' },
    state: { type: 'enum', values: ['WAITING', 'RUNNING'] },
    online: { type: 'boolean' },
    ratio: { type: 'decimal' },
  },
  defaultSort: [{ field: 'createTime', direction: 'desc' }],
};

function rejects(raw: Parameters<typeof parseListQuery>[0], parameter: string, fragment: string) {
  try {
    parseListQuery(raw, SPEC);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect((error as InvalidParameterError).parameter).toBe(parameter);
    expect((error as Error).message).toContain(fragment);
    return;
  }
  throw new Error('expected a rejection');
}

describe('list query grammar', () => {
  it('has the documented defaults', () => {
    const query = parseListQuery({}, SPEC);
    expect(query).toMatchObject({ offset: 0, limit: 20, search: '', filters: [], sort: SPEC.defaultSort });
  });

  it('parses paging given as text or numbers', () => {
    expect(parseListQuery({ offset: '40', limit: 0 }, SPEC)).toMatchObject({ offset: 40, limit: 0 });
  });

  it('refuses negative, fractional, non-numeric and huge paging values', () => {
    rejects({ offset: '-1' }, 'offset', 'between 0 and');
    rejects({ limit: '1.5' }, 'limit', 'between 0 and');
    rejects({ limit: 'ten' }, 'limit', 'between 0 and');
    rejects({ limit: '99999999999' }, 'limit', 'between 0 and');
    rejects({ limit: ['1', '2'] }, 'limit', 'given 2 times');
  });

  it('parses several sort keys, field names in any case', () => {
    expect(parseListQuery({ sort: 'NAME_a:createTime_D' }, SPEC).sort).toEqual([
      { field: 'name', direction: 'asc', caseInsensitive: true },
      { field: 'createTime', direction: 'desc', caseInsensitive: false },
    ]);
  });

  it("takes a filter's type prefix on a sort item, as some clients send it", () => {
    expect(parseListQuery({ sort: 'n_id_d:s_name_a' }, SPEC).sort).toEqual([
      { field: 'id', direction: 'desc', caseInsensitive: false },
      { field: 'name', direction: 'asc', caseInsensitive: true },
    ]);
    rejects({ sort: 'n_password_a' }, 'sort', "Unknown sort field 'n_password'");
  });

  it('takes fractions on decimal fields only, as plain decimals', () => {
    expect(parseListQuery({ filter: 'n_ratio_gt_0.5;ratio_in_0|1|-0.25' }, SPEC).filters).toEqual([
      { field: 'ratio', op: 'gt', values: [0.5] },
      { field: 'ratio', op: 'in', values: [0, 1, -0.25] },
    ]);
    rejects({ filter: 'id_gt_0.5' }, 'filter', 'must be a whole number');
    for (const value of ['half', '1e3', '.5', '0x1', '', 'Infinity'])
      rejects({ filter: `ratio_gt_${value}` }, 'filter', 'must be a decimal number');
  });

  it('names unknown sort fields and malformed items', () => {
    rejects({ sort: 'password_a' }, 'sort', "Unknown sort field 'password'");
    rejects({ sort: 'name' }, 'sort', '<field>_a or <field>_d');
  });

  it('parses filters with type prefixes, several items and repeated parameters', () => {
    const query = parseListQuery(
      { filter: ['s_name_eq_My_Project;n_id_in_1|2|3', 'state_noteq_waiting', 'b_online_eq_TRUE'] },
      SPEC,
    );
    expect(query.filters).toEqual([
      { field: 'name', op: 'eq', values: ['My_Project'] },
      { field: 'id', op: 'in', values: [1, 2, 3] },
      { field: 'state', op: 'noteq', values: ['WAITING'] },
      { field: 'online', op: 'eq', values: [true] },
    ]);
    expect(query.raw.filter).toHaveLength(3);
  });

  it('takes operands without values and dates in epoch milliseconds', () => {
    expect(parseListQuery({ filter: 'name_isnull;d_createTime_after_1700000000000' }, SPEC).filters).toEqual([
      { field: 'name', op: 'isnull', values: [] },
      { field: 'createTime', op: 'after', values: [1700000000000] },
    ]);
  });

  it('refuses unknown fields and operands, naming them and what is allowed', () => {
    rejects({ filter: 'secret_eq_1' }, 'filter', "Unknown filter field 'secret' for things; allowed: id, name");
    rejects({ filter: 'name_resembles_x' }, 'filter', "Unknown filter operand 'resembles'");
    rejects({ filter: 'name_gt_x' }, 'filter', "'gt' cannot be used on string field 'name'");
    rejects({ filter: 'id_eq_abc' }, 'filter', 'must be a whole number');
    rejects({ filter: 'id_eq_1.5' }, 'filter', 'must be a whole number');
    rejects({ filter: 'state_eq_FLYING' }, 'filter', 'must be one of WAITING, RUNNING');
    rejects({ filter: 'name_eq' }, 'filter', 'needs a value');
    rejects({ filter: 'name_isnull_x' }, 'filter', 'takes no value');
  });

  it('says why a field shown but not filterable cannot be filtered or sorted on, in any letter case', () => {
    const spec = { ...SPEC, notFilterable: { selfURI: "it is a link (the record's address), not data" } };
    for (const raw of [{ filter: 'selfURI_isnull' }, { filter: 's_selfuri_eq_x' }, { sort: 'selfURI_a' }]) {
      const parameter = 'filter' in raw ? 'filter' : 'sort';
      expect(() => parseListQuery(raw, spec)).toThrow(
        new InvalidParameterError(
          parameter,
          `Field 'selfURI' of things cannot be used in ${parameter}: it is a link (the record's address), not data; allowed: id, name, createTime, state, online, ratio`,
        ),
      );
    }
    expect(parseListQuery({ filter: 'name_eq_selfURI' }, spec).filters).toEqual([
      { field: 'name', op: 'eq', values: ['selfURI'] },
    ]);
  });

  it('keeps SQL-looking values as plain values', () => {
    const query = parseListQuery({ filter: "name_eq_x' OR 1=1 --", search: "'; DROP TABLE projects; --" }, SPEC);
    expect(query.filters[0]!.values).toEqual(["x' OR 1=1 --"]);
    expect(query.search).toBe("'; DROP TABLE projects; --");
  });

  it('turns whitespace in a search term into wildcards and escapes LIKE characters', () => {
    expect(searchPattern('my  device')).toBe('%my%device%');
    expect(searchPattern('100%_done')).toBe('%100\\%\\_done%');
  });
});
