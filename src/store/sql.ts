/**
 * SQL building blocks shared by the store modules: the list grammar turned into parameterised
 * conditions and ordering, case-insensitive matching, and "id in this set" as a single parameter
 * (so a listing costs the same number of statements whatever its size).
 */
import { type Expression, type Kysely, type RawBuilder, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import {
  type Filter,
  type FilterValue,
  type ListQuery,
  type SortKey,
  containsPattern,
  searchPattern,
} from '../domain/list-query.ts';
import type { Dialect } from './db.ts';
import { prepared } from './prepared.ts';

/**
 * A column or SQL expression. Strings are written in the store modules, never taken from requests,
 * so they may be spliced in raw; an expression that depends on the caller (whether a record is
 * shared with them) is a RawBuilder binding the caller's id as a parameter.
 */
export type Column = string | RawBuilder<unknown>;

/** Maps each listable field to its column or expression. */
export type ColumnMap<F extends string> = Readonly<Record<F, Column>>;

function expression(column: Column): RawBuilder<unknown> {
  return typeof column === 'string' ? sql.raw(column) : column;
}

export interface ListSql<F extends string> {
  readonly columns: ColumnMap<F>;
  /** Columns the free-text search looks in. */
  readonly searchColumns: readonly string[];
  /** Appended to every ordering so that pages are stable. */
  readonly tieBreaker: string;
}

const DAY_MS = 86_400_000;

export function ilike(dialect: Dialect, column: Column, pattern: string): RawBuilder<SqlBool> {
  // SQLite's LIKE is already case-insensitive (for ASCII); PostgreSQL needs ILIKE.
  const operator = sql.raw(dialect === 'postgres' ? 'ILIKE' : 'LIKE');
  return sql<SqlBool>`${expression(column)} ${operator} ${pattern} ESCAPE '\\'`;
}

/** `column IN (ids)` with the whole set bound as one parameter. */
export function inIds(dialect: Dialect, column: string, ids: readonly number[]): RawBuilder<SqlBool> {
  return inIdsParameter(dialect, column, idsParameter(dialect, ids));
}

/** The one parameter that carries a set of ids: an array for PostgreSQL, JSON text for SQLite. */
export function idsParameter(dialect: Dialect, ids: readonly number[]): unknown {
  return dialect === 'postgres' ? [...ids] : JSON.stringify(ids);
}

/** `column IN (ids)` with the set already made a parameter (idsParameter): prepared statements take it so. */
export function inIdsParameter(dialect: Dialect, column: string, ids: unknown): RawBuilder<SqlBool> {
  if (dialect === 'postgres') return sql<SqlBool>`${sql.raw(column)} = ANY(${ids}::bigint[])`;
  return sql<SqlBool>`${sql.raw(column)} IN (SELECT value FROM json_each(${ids}))`;
}

/** The WHERE conditions of a list query: its search term and each filter. */
export function listConditions<F extends string>(
  dialect: Dialect,
  query: ListQuery<F>,
  spec: ListSql<F>,
): Expression<SqlBool>[] {
  const conditions: Expression<SqlBool>[] = [];
  if (query.search !== '' && spec.searchColumns.length > 0) {
    const pattern = searchPattern(query.search);
    const matches = spec.searchColumns.map((column) => ilike(dialect, column, pattern));
    conditions.push(sql<SqlBool>`(${sql.join(matches, sql` OR `)})`);
  }
  for (const filter of query.filters) conditions.push(filterCondition(dialect, filter, spec.columns[filter.field]));
  return conditions;
}

function bind(value: FilterValue): string | number {
  // Booleans are stored as 0/1 on both engines.
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

function filterCondition(dialect: Dialect, filter: Filter, column: Column): RawBuilder<SqlBool> {
  const c = expression(column);
  const [first] = filter.values;
  const v = first === undefined ? null : bind(first);
  const list = () => sql.join(filter.values.map(bind));
  switch (filter.op) {
    case 'eq':
      return sql<SqlBool>`${c} = ${v}`;
    case 'noteq':
      return sql<SqlBool>`(${c} <> ${v} OR ${c} IS NULL)`;
    case 'gt':
    case 'after':
      return sql<SqlBool>`${c} > ${v}`;
    case 'lt':
    case 'before':
      return sql<SqlBool>`${c} < ${v}`;
    case 'afterorequal':
      return sql<SqlBool>`${c} >= ${v}`;
    case 'beforeorequal':
      return sql<SqlBool>`${c} <= ${v}`;
    case 'afterornull':
      return sql<SqlBool>`(${c} > ${v} OR ${c} IS NULL)`;
    case 'beforeornull':
      return sql<SqlBool>`(${c} < ${v} OR ${c} IS NULL)`;
    case 'on': {
      const dayStart = Math.floor(Number(v) / DAY_MS) * DAY_MS;
      return sql<SqlBool>`(${c} >= ${dayStart} AND ${c} < ${dayStart + DAY_MS})`;
    }
    case 'contains':
      return ilike(dialect, column, containsPattern(String(v)));
    case 'like':
      return ilike(dialect, column, String(v));
    case 'notlike':
      return sql<SqlBool>`(NOT ${ilike(dialect, column, String(v))} OR ${c} IS NULL)`;
    case 'empty':
      return sql<SqlBool>`(${c} IS NULL OR ${c} = '')`;
    case 'isnull':
      return sql<SqlBool>`${c} IS NULL`;
    case 'isnotnull':
      return sql<SqlBool>`${c} IS NOT NULL`;
    case 'in':
      return sql<SqlBool>`${c} IN (${list()})`;
    case 'notin':
      return sql<SqlBool>`(${c} NOT IN (${list()}) OR ${c} IS NULL)`;
    case 'inornull':
      return sql<SqlBool>`(${c} IN (${list()}) OR ${c} IS NULL)`;
  }
}

/** ORDER BY items for a sort, with nulls and letter case ordered the same way on both engines. */
export function orderItems<F extends string>(sort: readonly SortKey<F>[], spec: ListSql<F>): RawBuilder<unknown>[] {
  const items = sort.map(({ field, direction, caseInsensitive }) => {
    const column = expression(spec.columns[field]);
    const ordered = caseInsensitive ? sql`LOWER(${column})` : column;
    return sql`${ordered} ${sql.raw(direction === 'asc' ? 'ASC NULLS FIRST' : 'DESC NULLS LAST')}`;
  });
  items.push(sql.raw(`${spec.tieBreaker} ${sort[0]?.direction === 'asc' ? 'ASC' : 'DESC'}`));
  return items;
}

/**
 * One page of a list: the total (with the list's conditions) and the rows of the page, in the
 * requested order. `base` holds FROM and WHERE; `select` adds the columns.
 */
export async function pageOf<DB, TB extends keyof DB, Row, F extends string>(
  base: SelectQueryBuilder<DB, TB, object>,
  select: (query: SelectQueryBuilder<DB, TB, object>) => SelectQueryBuilder<DB, TB, Row>,
  query: ListQuery<F>,
  spec: ListSql<F>,
): Promise<{ total: number; rows: Row[] }> {
  const counted = (await base.select(sql<number>`COUNT(*)`.as('total')).executeTakeFirstOrThrow()) as { total: number };
  let page = select(base);
  for (const item of orderItems(query.sort, spec)) page = page.orderBy(item);
  // limit=0 means all; SQLite accepts OFFSET only after a LIMIT, so "all" is spelt as a huge one.
  if (query.limit > 0 || query.offset > 0) page = page.limit(query.limit > 0 ? query.limit : Number.MAX_SAFE_INTEGER);
  if (query.offset > 0) page = page.offset(query.offset);
  return { total: Number(counted.total), rows: await page.execute() };
}

/**
 * pageOf for a list's plain query (no filter, search or sort given: how CI polls), its statements
 * prepared once (store/prepared.ts); undefined for any other query, which pageOf answers. `base`
 * must use the owner's id only as a parameter.
 */
export function plainPages<K, DB, TB extends keyof DB, Row, F extends string>(
  db: Kysely<K>,
  base: (owner: number) => SelectQueryBuilder<DB, TB, object>,
  select: (query: SelectQueryBuilder<DB, TB, object>) => SelectQueryBuilder<DB, TB, Row>,
  spec: ListSql<F>,
): (owner: number, query: ListQuery<F>) => Promise<{ total: number; rows: Row[] }> | undefined {
  const count = prepared(db, 1, (owner: number) => base(owner).select(sql<number>`COUNT(*)`.as('total')));
  let pages:
    | {
        all: (owner: number) => Promise<Row[]>;
        limited: (owner: number, limit: number) => Promise<Row[]>;
        skipped: (owner: number, limit: number, offset: number) => Promise<Row[]>;
      }
    | undefined;
  return (owner, query) => {
    if (query.raw.sort !== '' || query.filters.length > 0 || query.search !== '') return undefined;
    // Without a sort given, every query has the list's default one.
    const ordered = (id: number) => {
      let page = select(base(id));
      for (const item of orderItems(query.sort, spec)) page = page.orderBy(item);
      return page;
    };
    pages ??= {
      all: prepared(db, 1, (id: number) => ordered(id)),
      limited: prepared(db, 2, (id: number, limit: number) => ordered(id).limit(limit)),
      skipped: prepared(db, 3, (id: number, limit: number, offset: number) => ordered(id).limit(limit).offset(offset)),
    };
    const { all, limited, skipped } = pages;
    return (async () => {
      const [counted] = (await count(owner)) as Array<{ total: number }>;
      // As pageOf: limit=0 means all, and SQLite takes OFFSET only after a LIMIT.
      const limit = query.limit > 0 ? query.limit : Number.MAX_SAFE_INTEGER;
      const rows =
        query.offset > 0
          ? await skipped(owner, limit, query.offset)
          : query.limit > 0
            ? await limited(owner, limit)
            : await all(owner);
      return { total: Number(counted?.total ?? 0), rows };
    })();
  };
}

export function flag(value: boolean): number {
  return value ? 1 : 0;
}
