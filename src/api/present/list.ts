import Type, { type TObject } from 'typebox';
import type { ListQuery } from '../../domain/list-query.ts';
import { Count, MaybeStr, SelfURI, Str } from './fields.ts';
import { KIND, Nested, type Rep, isRep, rep } from './representation.ts';

export interface ListLinks {
  /** e.g. `/me/projects`: the request path without its `/api` or `/api/v2` prefix. */
  readonly selfURI: string;
  /** Full URL of the collection, without a query string; `next`/`previous` extend it. */
  readonly url: string;
  /** Other query parameters to repeat in the links (e.g. `withPublic`). */
  readonly extra?: Readonly<Record<string, string>>;
}

/** The schema of the list envelope holding `item`s (XML type `apiList`), fields in presentList's order. */
export function listSchema(item: TObject) {
  return Type.Object(
    {
      selfURI: SelfURI,
      data: Type.Array(Nested(item)),
      limit: Count,
      next: MaybeStr,
      offset: Count,
      previous: MaybeStr,
      search: Str,
      sort: Str,
      total: Count,
      empty: Type.Boolean(),
    },
    { title: `${(item as { title?: string }).title}List`, xml: { name: 'apiList' } },
  );
}

/** The list envelope every collection answers (docs/api.md#lists), fields in its documented order. */
export function presentList(items: readonly Rep[], total: number, query: ListQuery, links: ListLinks): Rep {
  const { offset, limit } = query;
  const hasNext = limit > 0 && offset + limit < total;
  return rep('apiList', {
    selfURI: links.selfURI,
    data: items.map((item, index) => withRowIndex(item, offset + index)),
    limit,
    next: hasNext ? pageUrl(links, query, offset + limit) : null,
    offset,
    previous: offset > 0 ? pageUrl(links, query, limit > 0 ? Math.max(0, offset - limit) : 0) : null,
    search: query.search,
    sort: query.raw.sort,
    total,
    empty: items.length === 0,
  });
}
/**
 * Records that carry `rowIndex` (projects, runs, device sessions) say where in the whole list they
 * stand: offset + position, from 0. Read on their own they have none (null).
 */
function withRowIndex(item: Rep, rowIndex: number): Rep {
  if (!isRep(item) || !('rowIndex' in item)) return item;
  return rep(item[KIND], { ...item, rowIndex });
}

function pageUrl(links: ListLinks, query: ListQuery, offset: number): string {
  const params = new URLSearchParams(links.extra);
  params.set('offset', String(offset));
  params.set('limit', String(query.limit));
  if (query.search !== '') params.set('search', query.search);
  if (query.raw.sort !== '') params.set('sort', query.raw.sort);
  for (const filter of query.raw.filter) params.append('filter', filter);
  return `${links.url}?${params.toString()}`;
}

/** A sub-list that is always answered whole (steps, parameters), in the same envelope. */
export function presentWholeList(items: readonly Rep[], links: ListLinks): Rep {
  const query: ListQuery = { offset: 0, limit: 0, search: '', sort: [], filters: [], raw: { sort: '', filter: [] } };
  return presentList(items, items.length, query, links);
}
