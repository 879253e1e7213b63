import Type, { type TObject } from 'typebox';
import type { FieldSpec, FieldType, ListQuery, ListSpec, SortKey } from '../../domain/list-query.ts';
import type { RouteList } from '../route.ts';
import { Count, MaybeStr, SelfURI, Str } from './fields.ts';
import { KIND, Nested, type Rep, isRep, rep } from './representation.ts';

export interface ListLinks {
  /** e.g. `/me/projects`: the request path without its `/api` or `/api/v2` prefix. */
  readonly selfURI: string;
  /** Full URL of the collection, without a query string; `next`/`previous` extend it. */
  readonly url: string;
  /** Other query parameters to repeat in the links (e.g. `withPublic`). */
  readonly extra?: Readonly<Record<string, string | readonly string[]>>;
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
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(links.extra ?? {}))
    for (const item of typeof value === 'string' ? [value] : value) params.append(name, item);
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

/**
 * The list spec of a list held in memory, read from its items' schema: every scalar field the
 * items show may be filtered and sorted on (docs/api.md#lists), with the type the schema gives it
 * (a whole number described as epoch milliseconds is a date). Arrays and nested entities are not.
 */
export function itemList(
  item: TObject,
  options: {
    readonly entity: string;
    readonly sort: readonly SortKey[];
    readonly search: readonly string[];
    /** Without `limit`, every item (0) unless given: these lists were answered whole before they took the grammar. */
    readonly defaultLimit?: number;
    /** Fields shown that are not values (nested lists or records shown as null), as storedList's `shownOnly`. */
    readonly shownOnly?: readonly string[];
  },
): RouteList {
  const shown = Object.keys(item.properties);
  const shownOnly = [...shown.filter((name) => LINKS.has(name)), ...(options.shownOnly ?? [])];
  const fields: Record<string, FieldSpec> = {};
  for (const [name, schema] of Object.entries(item.properties)) {
    const type = fieldType(name, schema as FieldSchema);
    if (type !== null && !shownOnly.includes(name)) fields[name] = { type };
  }
  for (const field of [...options.sort.map((key) => key.field), ...options.search]) {
    if (fields[field] === undefined) throw new Error(`list of ${options.entity}: no field '${field}' in its items`);
  }
  const spec: ListSpec = {
    entity: options.entity,
    fields,
    defaultSort: options.sort,
    defaultLimit: options.defaultLimit ?? 0,
  };
  return { ...withReasons(spec, shownOnly), search: options.search };
}

/**
 * Why a field the items show cannot be filtered or sorted on (docs/api.md#lists): a filter on it
 * is a 400 saying so. Every field a list names as shown-only needs its reason here.
 */
const NOT_FILTERABLE: Readonly<Record<string, string>> = {
  selfURI: "it is a link (the record's address), not data",
  uiLink: "it is a link (the record's page in the web UI), not data",
  directUrl: "it is a link (where the file's content is served), not data",
  iconDirectUrl: "it is a link (where the file's icon is served), not data",
  video: "it is a link (the session's recording), not data",
  message: 'it is written from the live queue when the run is read; filter on state or queuePosition',
  properties: 'it is a nested list (GET /devices/{id}/properties lists it)',
  browsers: 'it is a nested list',
  availability: 'it is a nested record',
  steps: 'it is a nested list',
  sampleApp: 'it is a nested record (a file)',
  sampleTest: 'it is a nested record (a file)',
};

/** Links are never filtered on, in any list: the record's address is not data. */
const LINKS: ReadonlySet<string> = new Set(['selfURI', 'uiLink', 'directUrl', 'iconDirectUrl']);

function withReasons<F extends string>(spec: ListSpec<F>, shownOnly: readonly string[]): RouteList<F> {
  const notFilterable: Record<string, string> = {};
  for (const field of shownOnly) {
    const why = NOT_FILTERABLE[field];
    if (why === undefined) throw new Error(`list of ${spec.entity}: say why '${field}' cannot be filtered on`);
    notFilterable[field] = why;
  }
  return { spec: { ...spec, notFilterable }, search: [], shownOnly };
}

/**
 * A list the store filters, sorts and pages (store/sql.ts), on the fields of its spec; `shownOnly`
 * names the fields its items show that cannot be (links, nested lists, text written when read).
 */
export function storedList<F extends string>(spec: ListSpec<F>, shownOnly: readonly string[] = []): RouteList<F> {
  return withReasons(spec, shownOnly);
}

interface FieldSchema {
  readonly type?: string | readonly string[];
  readonly description?: string;
  /** A union (`Type.Union([Type.Null(), Type.Integer()])`): its members' types. */
  readonly anyOf?: readonly FieldSchema[];
}

function fieldType(name: string, schema: FieldSchema): FieldType | null {
  const types = schema.anyOf
    ? schema.anyOf.flatMap((member) => (Array.isArray(member.type) ? member.type : [member.type]))
    : Array.isArray(schema.type)
      ? schema.type
      : [schema.type];
  const described = schema.description ?? schema.anyOf?.find((member) => member.description)?.description;
  const type = types.find((t) => t !== 'null') ?? (types.includes('null') ? 'null' : undefined);
  const isTime = /Time(stamp)?$/.test(name) || /milliseconds since/i.test(described ?? '');
  switch (type) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'integer':
      return isTime ? 'date' : 'number';
    case 'number':
      return isTime ? 'date' : 'decimal';
    // Always null here (a field kept for the clients): still filterable, e.g. with isnull.
    case 'null':
      return isTime ? 'date' : 'string';
    default:
      return null;
  }
}
