/**
 * The list grammar over records in memory (domain/list-eval.ts) keeps the store's semantics:
 * case-insensitive text matching, negative operands matching null, nulls first ascending and last
 * descending, `id` breaking ties, paging after filtering. test/integration/every-list.test.ts
 * compares it with the store on the same records.
 */
import { describe, expect, it } from 'vitest';
import { evaluateList, likeRegExp } from '../../src/domain/list-eval.ts';
import { type ListSpec, parseListQuery } from '../../src/domain/list-query.ts';

const SPEC: ListSpec = {
  entity: 'files',
  fields: {
    id: { type: 'number' },
    name: { type: 'string' },
    mimetype: { type: 'string' },
    state: { type: 'string' },
    size: { type: 'number' },
    createTime: { type: 'date' },
    shared: { type: 'boolean' },
  },
  defaultSort: [{ field: 'id', direction: 'asc' }],
};

const DAY = 86_400_000;
const FILES = [
  { id: 1, name: 'screen-1.png', mimetype: 'image/png', state: 'READY', size: 10, createTime: 5 * DAY, shared: false },
  {
    id: 2,
    name: 'action-1.png',
    mimetype: 'image/png',
    state: 'READY',
    size: 30,
    createTime: 5 * DAY + 1,
    shared: true,
  },
  { id: 3, name: 'Video.MP4', mimetype: 'video/mp4', state: 'READY', size: 20, createTime: 6 * DAY, shared: false },
  { id: 4, name: 'log.txt', mimetype: 'text/plain', state: 'PROCESSING', size: 20, createTime: 7 * DAY, shared: false },
  { id: 5, name: null, mimetype: 'application/zip', state: 'READY', size: 0, createTime: 7 * DAY, shared: false },
];

function ids(params: Record<string, unknown>, search: readonly string[] = ['name']): number[] {
  return evaluateList(FILES, parseListQuery(params, SPEC), search).items.map((item) => item.id);
}

describe('the list grammar over records in memory', () => {
  it("applies the public clients' images() and nonMediaFiles() filters", () => {
    const images =
      's_state_eq_READY;mimetype_in_image/png|image/jpg|image/jpeg|image/webp|image/gif;name_notlike_action-%%';
    expect(ids({ filter: images })).toEqual([1]);
    const nonMedia = 'state_eq_READY;mimetype_notin_image/png|image/jpg|image/jpeg|image/webp|image/gif|video/mp4';
    expect(ids({ filter: nonMedia })).toEqual([5]);
  });

  it('matches text without regard to case, with LIKE patterns and escapes', () => {
    expect(ids({ filter: 'name_like_video%' })).toEqual([3]);
    expect(ids({ filter: 'name_contains_EN-' })).toEqual([1]);
    expect(ids({ filter: 'name_like_screen\\-_.png' })).toEqual([1]);
    expect(ids({ filter: 'name_like_screen-\\_.png' })).toEqual([]);
    expect(likeRegExp('100\\%').test('100%')).toBe(true);
    expect(likeRegExp('100\\%').test('1000')).toBe(false);
  });

  it('lets negative operands and empty match null, and positive ones not', () => {
    expect(ids({ filter: 'name_noteq_log.txt' })).toEqual([1, 2, 3, 5]);
    expect(ids({ filter: 'name_notlike_%.png' })).toEqual([3, 4, 5]);
    expect(ids({ filter: 'name_notin_log.txt|Video.MP4' })).toEqual([1, 2, 5]);
    expect(ids({ filter: 'name_empty' })).toEqual([5]);
    expect(ids({ filter: 'name_isnull' })).toEqual([5]);
    expect(ids({ filter: 'name_like_%' })).toEqual([1, 2, 3, 4]);
    expect(ids({ filter: 'name_inornull_log.txt' })).toEqual([4, 5]);
  });

  it('compares numbers, dates, days and booleans', () => {
    expect(ids({ filter: 'n_size_gt_10' })).toEqual([2, 3, 4]);
    expect(ids({ filter: 'size_afterorequal_20;size_beforeorequal_20' })).toEqual([3, 4]);
    expect(ids({ filter: `d_createTime_on_${5 * DAY + 500}` })).toEqual([1, 2]);
    expect(ids({ filter: `createTime_before_${6 * DAY}` })).toEqual([1, 2]);
    expect(ids({ filter: 'b_shared_eq_true' })).toEqual([2]);
    expect(ids({ filter: 'shared_noteq_true' })).toEqual([1, 3, 4, 5]);
  });

  it('sorts text ignoring case with nulls first ascending and last descending, id breaking ties', () => {
    expect(ids({ sort: 'name_a' })).toEqual([5, 2, 4, 1, 3]);
    expect(ids({ sort: 'name_d' })).toEqual([3, 1, 4, 2, 5]);
    expect(ids({ sort: 'size_a' })).toEqual([5, 1, 3, 4, 2]);
    expect(ids({ sort: 'size_d' })).toEqual([2, 4, 3, 1, 5]);
    expect(ids({ sort: 'state_a:size_d' })).toEqual([4, 2, 3, 1, 5]);
  });

  it('pages after filtering and counts what matched', () => {
    const query = parseListQuery({ filter: 'state_eq_READY', sort: 'id_d', offset: '1', limit: '2' }, SPEC);
    const page = evaluateList(FILES, query);
    expect(page.total).toBe(4);
    expect(page.items.map((item) => item.id)).toEqual([3, 2]);
    expect(ids({ limit: '0', offset: '4' })).toEqual([5]);
  });

  it('searches the given fields with whitespace matching anything', () => {
    expect(ids({ search: 'SCREEN png' })).toEqual([1]);
    expect(ids({ search: 'png' }, [])).toEqual([]);
  });

  it('keeps the given order when there is no sort', () => {
    const unsorted: ListSpec = { ...SPEC, defaultSort: [] };
    const reversed = [...FILES].reverse();
    expect(evaluateList(reversed, parseListQuery({}, unsorted)).items.map((item) => item.id)).toEqual([5, 4, 3, 2, 1]);
  });
});
