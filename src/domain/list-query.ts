/**
 * The list grammar of the public API (docs/api.md#lists): offset/limit paging, free-text search, sorting
 * (`createTime_d:id_a`) and filters (`s_name_eq_Foo;n_id_in_1|2`). Parsing produces a checked
 * structure: only fields the entity declares, values already converted to their type. The store
 * turns it into parameterised SQL; nothing from the query string ever becomes SQL text.
 */
import { InvalidParameterError } from './errors.ts';

/** `number` is a whole number (ids, counts); `decimal` may have a fraction (ratios, 0..1). */
export type FieldType = 'string' | 'number' | 'decimal' | 'date' | 'boolean' | 'enum';

export interface FieldSpec {
  readonly type: FieldType;
  /** Allowed values of an enum field, in canonical spelling. */
  readonly values?: readonly string[];
}

export interface ListSpec<F extends string = string> {
  /** Entity name used in error messages, e.g. "projects". */
  readonly entity: string;
  readonly fields: Readonly<Record<F, FieldSpec>>;
  readonly defaultSort: readonly SortKey<F>[];
  /** The page size without `limit`: DEFAULT_LIMIT, or 0 (all) for sub-lists that were always answered whole. */
  readonly defaultLimit?: number;
  /** Fields the items show that cannot be filtered or sorted on, each with why: a filter on one says so. */
  readonly notFilterable?: Readonly<Record<string, string>>;
}

export const OPERANDS = [
  'eq',
  'noteq',
  'gt',
  'lt',
  'after',
  'before',
  'on',
  'contains',
  'like',
  'notlike',
  'empty',
  'isnull',
  'isnotnull',
  'in',
  'notin',
  'inornull',
  'afterorequal',
  'beforeorequal',
  'afterornull',
  'beforeornull',
] as const;
export type Operand = (typeof OPERANDS)[number];

export type FilterValue = string | number | boolean;

export interface Filter<F extends string = string> {
  readonly field: F;
  readonly op: Operand;
  readonly values: readonly FilterValue[];
}

export interface SortKey<F extends string = string> {
  readonly field: F;
  readonly direction: 'asc' | 'desc';
  /** Text sorts ignore case, the same on every database. */
  readonly caseInsensitive?: boolean;
}

export interface ListQuery<F extends string = string> {
  readonly offset: number;
  /** 0 means "all". */
  readonly limit: number;
  /** Trimmed search term, '' when absent. */
  readonly search: string;
  readonly sort: readonly SortKey<F>[];
  readonly filters: readonly Filter<F>[];
  /** The parameters as the client spelled them, repeated in `next`/`previous` links. */
  readonly raw: { readonly sort: string; readonly filter: readonly string[] };
}

export interface RawListParams {
  offset?: unknown;
  limit?: unknown;
  search?: unknown;
  sort?: unknown;
  filter?: unknown;
}

export const DEFAULT_LIMIT = 20;
const MAX_PAGING = 2_147_483_647;
const TYPE_PREFIXES = new Set(['s', 'n', 'd', 'b', 'ls', 'ln']);
const OPERAND_SET: ReadonlySet<string> = new Set(OPERANDS);

/** Which operands make sense for which field type. */
const NUMBER_OPERANDS: ReadonlySet<Operand> = new Set([
  'eq',
  'noteq',
  'gt',
  'lt',
  'after',
  'before',
  'afterorequal',
  'beforeorequal',
  'afterornull',
  'beforeornull',
  'isnull',
  'isnotnull',
  'in',
  'notin',
  'inornull',
]);
const OPERANDS_BY_TYPE: Record<FieldType, ReadonlySet<Operand>> = {
  string: new Set([
    'eq',
    'noteq',
    'contains',
    'like',
    'notlike',
    'empty',
    'isnull',
    'isnotnull',
    'in',
    'notin',
    'inornull',
  ]),
  enum: new Set(['eq', 'noteq', 'isnull', 'isnotnull', 'in', 'notin', 'inornull']),
  boolean: new Set(['eq', 'noteq', 'isnull', 'isnotnull']),
  number: NUMBER_OPERANDS,
  decimal: NUMBER_OPERANDS,
  date: new Set([
    'eq',
    'noteq',
    'gt',
    'lt',
    'after',
    'before',
    'on',
    'afterorequal',
    'beforeorequal',
    'afterornull',
    'beforeornull',
    'isnull',
    'isnotnull',
    'in',
    'notin',
    'inornull',
  ]),
};
const NO_VALUE: ReadonlySet<Operand> = new Set(['empty', 'isnull', 'isnotnull']);
const LIST_VALUED: ReadonlySet<Operand> = new Set(['in', 'notin', 'inornull']);

export function parseListQuery<F extends string>(raw: RawListParams, spec: ListSpec<F>): ListQuery<F> {
  const fieldsByLowerName = new Map<string, F>();
  for (const name of Object.keys(spec.fields) as F[]) fieldsByLowerName.set(name.toLowerCase(), name);

  const sortText = textParam('sort', raw.sort);
  const filterTexts = listParam('filter', raw.filter);
  const sort = sortText === '' ? spec.defaultSort : parseSort(sortText, spec, fieldsByLowerName);
  const filters = filterTexts.flatMap((text) =>
    text
      .split(';')
      .filter((item) => item !== '')
      .map((item) => parseFilter(item, spec, fieldsByLowerName)),
  );
  return {
    offset: pagingParam('offset', raw.offset, 0),
    limit: pagingParam('limit', raw.limit, spec.defaultLimit ?? DEFAULT_LIMIT),
    search: textParam('search', raw.search).trim(),
    sort,
    filters,
    raw: { sort: sortText, filter: filterTexts },
  };
}

function pagingParam(name: string, value: unknown, fallback: number): number {
  const text = scalar(name, value);
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text) || Number(text) > MAX_PAGING) {
    throw new InvalidParameterError(
      name,
      `Parameter '${name}' must be an integer between 0 and ${MAX_PAGING}, got '${clip(text)}'`,
    );
  }
  return Number(text);
}

function textParam(name: string, value: unknown): string {
  return withoutNul(name, scalar(name, value) ?? '');
}

/** PostgreSQL text cannot hold NUL: a value carrying one would fail the whole statement. */
function withoutNul(name: string, text: string): string {
  if (text.includes('\u0000'))
    throw new InvalidParameterError(name, `Parameter '${name}' must not contain NUL characters`);
  return text;
}

function scalar(name: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) {
    if (value.length === 1) return scalar(name, value[0]);
    throw new InvalidParameterError(name, `Parameter '${name}' was given ${value.length} times; give it once`);
  }
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  throw new InvalidParameterError(name, `Parameter '${name}' must be text`);
}

function listParam(name: string, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const items = Array.isArray(value) ? value : [value];
  return items.map((item) => {
    if (typeof item !== 'string') throw new InvalidParameterError(name, `Parameter '${name}' must be text`);
    return item;
  });
}

function parseSort<F extends string>(text: string, spec: ListSpec<F>, fields: Map<string, F>): SortKey<F>[] {
  return text.split(':').map((item) => {
    const match = /^(.+)_([ad])$/i.exec(item);
    if (!match) {
      throw new InvalidParameterError(
        'sort',
        `Sort item '${clip(item)}' must be <field>_a or <field>_d (e.g. createTime_d)`,
      );
    }
    const field = lookupField('sort', withoutTypePrefix(match[1]!, fields), spec, fields);
    return {
      field,
      direction: match[2]!.toLowerCase() === 'a' ? 'asc' : 'desc',
      caseInsensitive: spec.fields[field].type === 'string',
    };
  });
}

/** A sort item may carry a filter's type prefix (`n_finishedDeviceCount_d`), as some clients send it. */
function withoutTypePrefix<F extends string>(name: string, fields: Map<string, F>): string {
  const split = name.indexOf('_');
  if (split < 0 || fields.has(name.toLowerCase())) return name;
  const rest = name.slice(split + 1);
  return TYPE_PREFIXES.has(name.slice(0, split).toLowerCase()) && fields.has(rest.toLowerCase()) ? rest : name;
}

function parseFilter<F extends string>(item: string, spec: ListSpec<F>, fields: Map<string, F>): Filter<F> {
  const parts = item.split('_');
  // An optional type prefix (s_, n_, d_, ...) may precede the field; it is only a prefix when
  // what follows still has a field and an operand.
  if (parts.length >= 3 && TYPE_PREFIXES.has(parts[0]!.toLowerCase()) && !OPERAND_SET.has(parts[1]!.toLowerCase())) {
    parts.shift();
  }
  if (parts.length < 2) {
    throw new InvalidParameterError(
      'filter',
      `Filter '${clip(item)}' must be <field>_<operand>[_<value>] (e.g. name_eq_MyProject)`,
    );
  }
  const field = lookupField('filter', parts[0]!, spec, fields);
  const operandText = parts[1]!.toLowerCase();
  if (!OPERAND_SET.has(operandText)) {
    throw new InvalidParameterError(
      'filter',
      `Unknown filter operand '${clip(parts[1]!)}' in '${clip(item)}'; allowed: ${OPERANDS.join(', ')}`,
    );
  }
  const op = operandText as Operand;
  const fieldSpec = spec.fields[field];
  if (!OPERANDS_BY_TYPE[fieldSpec.type].has(op)) {
    throw new InvalidParameterError(
      'filter',
      `Filter operand '${op}' cannot be used on ${fieldSpec.type} field '${field}'; allowed: ${[...OPERANDS_BY_TYPE[fieldSpec.type]].join(', ')}`,
    );
  }
  const valueText = parts.length > 2 ? parts.slice(2).join('_') : undefined;
  if (NO_VALUE.has(op)) {
    if (valueText !== undefined && valueText !== '') {
      throw new InvalidParameterError(
        'filter',
        `Filter operand '${op}' takes no value, got '${clip(valueText)}' in '${clip(item)}'`,
      );
    }
    return { field, op, values: [] };
  }
  if (valueText === undefined) {
    throw new InvalidParameterError('filter', `Filter '${clip(item)}' needs a value after '${op}_'`);
  }
  const texts = LIST_VALUED.has(op) ? valueText.split('|') : [valueText];
  // A backslash escapes the next character of a like pattern; PostgreSQL refuses a pattern ending with one.
  if ((op === 'like' || op === 'notlike') && /(^|[^\\])(\\\\)*\\$/.test(valueText)) {
    throw new InvalidParameterError(
      'filter',
      `Filter value '${clip(valueText)}' for '${field}' ends with an escape character (\\); write \\\\ for a backslash`,
    );
  }
  return { field, op, values: texts.map((text) => convertValue(text, field, fieldSpec)) };
}

function lookupField<F extends string>(param: string, name: string, spec: ListSpec<F>, fields: Map<string, F>): F {
  const field = fields.get(name.toLowerCase());
  if (field !== undefined) return field;
  const allowed = `allowed: ${Object.keys(spec.fields).join(', ')}`;
  const [shown, why] =
    Object.entries(spec.notFilterable ?? {}).find(([shown]) => shown.toLowerCase() === name.toLowerCase()) ?? [];
  if (shown !== undefined)
    throw new InvalidParameterError(
      param,
      `Field '${shown}' of ${spec.entity} cannot be used in ${param}: ${why}; ${allowed}`,
    );
  throw new InvalidParameterError(param, `Unknown ${param} field '${clip(name)}' for ${spec.entity}; ${allowed}`);
}

function convertValue(text: string, field: string, spec: FieldSpec): FilterValue {
  switch (spec.type) {
    case 'string':
      return withoutNul('filter', text);
    case 'number':
    case 'date': {
      const value = Number(text);
      // Every number and date field is a whole number in a 64-bit column: anything else (1.5, 1e20)
      // would make PostgreSQL refuse the whole statement.
      if (text.trim() === '' || !Number.isSafeInteger(value)) {
        const what = spec.type === 'date' ? 'a date in epoch milliseconds' : 'a whole number';
        throw new InvalidParameterError('filter', `Filter value '${clip(text)}' for '${field}' must be ${what}`);
      }
      return value;
    }
    case 'decimal': {
      // A plain decimal (0.5, -1, 2.25): the columns behind these fields are computed NUMERIC/REAL values.
      const value = Number(text);
      if (!/^-?\d+(\.\d+)?$/.test(text.trim()) || !Number.isFinite(value)) {
        throw new InvalidParameterError(
          'filter',
          `Filter value '${clip(text)}' for '${field}' must be a decimal number`,
        );
      }
      return value;
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower !== 'true' && lower !== 'false') {
        throw new InvalidParameterError('filter', `Filter value '${clip(text)}' for '${field}' must be true or false`);
      }
      return lower === 'true';
    }
    case 'enum': {
      const match = spec.values?.find((value) => value.toLowerCase() === text.toLowerCase());
      if (match === undefined) {
        throw new InvalidParameterError(
          'filter',
          `Filter value '${clip(text)}' for '${field}' must be one of ${spec.values?.join(', ')}`,
        );
      }
      return match;
    }
  }
}

/** Keeps echoed client text short in error messages. */
function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Turns a search term into a LIKE pattern: whitespace matches anything (`my device` → `%my%device%`). */
export function searchPattern(term: string): string {
  const escaped = term.replace(/[\\%_]/g, (c) => `\\${c}`);
  return `%${escaped
    .split(/\s+/)
    .filter((part) => part !== '')
    .join('%')}%`;
}

/** The same escaping for `contains`: a literal substring. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
