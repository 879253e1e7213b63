/**
 * The list grammar (docs/api.md#lists) applied to records held in memory: the lists that are not
 * rows of one table (frameworks, a session's files, screenshots, test cases, steps, a group's
 * devices). Without a sort they keep the order given. The semantics are the store's (store/sql.ts): text matching ignores case, `noteq`,
 * `notin` and `notlike` also match null, `empty` is null or '', ascending sorts put nulls first
 * and descending ones last, and `id` breaks ties in the direction of the first sort key.
 */
import { type Filter, type FilterValue, type ListQuery, type SortKey, searchPattern } from './list-query.ts';

export type ListRecord = Readonly<Record<string, unknown>>;

export interface Page<T> {
  readonly items: readonly T[];
  /** Matching records before paging. */
  readonly total: number;
}

const DAY_MS = 86_400_000;

/** The page of `records` the query asks for; `searchFields` are the fields `search` looks in. */
export function evaluateList<T extends ListRecord>(
  records: readonly T[],
  query: ListQuery,
  searchFields: readonly string[] = [],
): Page<T> {
  const search = query.search === '' ? null : likeRegExp(searchPattern(query.search));
  const matching = records.filter(
    (record) =>
      (search === null || searchFields.some((field) => matchesLike(record[field], search))) &&
      query.filters.every((filter) => matches(record[filter.field], filter)),
  );
  const sorted = matching
    .map((record, position) => ({ record, position }))
    .sort((a, b) => compareRecords(a.record, b.record, query.sort) || a.position - b.position)
    .map(({ record }) => record);
  const end = query.limit > 0 ? query.offset + query.limit : undefined;
  return { items: sorted.slice(query.offset, end), total: matching.length };
}

/** A SQL LIKE pattern (`%`, `_`, `\` escapes the next character) as an anchored, case-insensitive RegExp. */
export function likeRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i]!);
    else if (c === '%') source += '.*';
    else if (c === '_') source += '.';
    else source += escapeRegExp(c);
  }
  return new RegExp(`^${source}$`, 'isu');
}

function escapeRegExp(c: string): string {
  return /[\\^$.*+?()[\]{}|]/.test(c) ? `\\${c}` : c;
}

/** What a record's field is compared as: null when absent, booleans and numbers as they are. */
function scalar(value: unknown): string | number | boolean | null {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return null;
}

function matchesLike(value: unknown, pattern: RegExp): boolean {
  const v = scalar(value);
  return v !== null && pattern.test(String(v));
}

function same(value: string | number | boolean, wanted: FilterValue): boolean {
  return value === wanted;
}

function matches(raw: unknown, filter: Filter): boolean {
  const v = scalar(raw);
  const values = filter.values;
  const first = values[0]!;
  const ordered = (test: (a: number | string, b: number | string) => boolean) =>
    v !== null && typeof v !== 'boolean' && typeof first !== 'boolean' && test(v, first);
  switch (filter.op) {
    case 'eq':
      return v !== null && same(v, first);
    case 'noteq':
      return v === null || !same(v, first);
    case 'gt':
    case 'after':
      return ordered((a, b) => a > b);
    case 'lt':
    case 'before':
      return ordered((a, b) => a < b);
    case 'afterorequal':
      return ordered((a, b) => a >= b);
    case 'beforeorequal':
      return ordered((a, b) => a <= b);
    case 'afterornull':
      return v === null || ordered((a, b) => a > b);
    case 'beforeornull':
      return v === null || ordered((a, b) => a < b);
    case 'on': {
      const dayStart = Math.floor(Number(first) / DAY_MS) * DAY_MS;
      return typeof v === 'number' && v >= dayStart && v < dayStart + DAY_MS;
    }
    case 'contains':
      return v !== null && String(v).toLowerCase().includes(String(first).toLowerCase());
    case 'like':
      return matchesLike(v, likeRegExp(String(first)));
    case 'notlike':
      return v === null || !likeRegExp(String(first)).test(String(v));
    case 'empty':
      return v === null || v === '';
    case 'isnull':
      return v === null;
    case 'isnotnull':
      return v !== null;
    case 'in':
      return v !== null && values.some((value) => same(v, value));
    case 'notin':
      return v === null || !values.some((value) => same(v, value));
    case 'inornull':
      return v === null || values.some((value) => same(v, value));
  }
}

function compareRecords(a: ListRecord, b: ListRecord, sort: readonly SortKey[]): number {
  // No sort asked and none by default: the order the records came in (e.g. the order a run named its files).
  if (sort.length === 0) return 0;
  for (const key of sort) {
    const order = compareValues(scalar(a[key.field]), scalar(b[key.field]), key.caseInsensitive === true);
    if (order !== 0) return key.direction === 'asc' ? order : -order;
  }
  const tie = compareValues(scalar(a.id), scalar(b.id), false);
  return sort[0]?.direction === 'asc' ? tie : -tie;
}

/** Nulls before every value (so first ascending, last descending, as the store orders them). */
function compareValues(
  a: string | number | boolean | null,
  b: string | number | boolean | null,
  caseInsensitive: boolean,
): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  const x = caseInsensitive && typeof a === 'string' ? a.toLowerCase() : a;
  const y = caseInsensitive && typeof b === 'string' ? b.toLowerCase() : b;
  return x < y ? -1 : x > y ? 1 : 0;
}
