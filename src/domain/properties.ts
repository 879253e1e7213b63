/**
 * The cloud's system properties (docs/api.md#properties): named values operators set for the whole
 * cloud, such as the maintenance banner the clients look for (names starting `CLOUD_HEADER`),
 * optionally in force only between two times. Every signed-in user reads them; operators write.
 */
import { InvalidParameterError } from './errors.ts';
import type { ListSpec } from './list-query.ts';
import { checkText } from './text.ts';
import { asInteger, asText } from './values.ts';

export interface Property {
  readonly id: number;
  readonly name: string;
  readonly value: string | null;
  readonly description: string | null;
  /** In force from (epoch ms); null: since ever. */
  readonly fromTime: number | null;
  /** In force until (epoch ms); null: for ever. */
  readonly toTime: number | null;
  readonly updateTime: number;
  /** The operator who last wrote it; null once that account is gone. */
  readonly updatedById: number | null;
  readonly updatedByDisplayName: string | null;
}

export type PropertyDraft = Pick<Property, 'name' | 'value' | 'description' | 'fromTime' | 'toTime'>;

export interface PropertyInput {
  readonly name?: unknown;
  readonly value?: unknown;
  readonly description?: unknown;
  readonly fromTime?: unknown;
  readonly toTime?: unknown;
}

export const PROPERTY_NAME_MAX = 255;
export const PROPERTY_VALUE_MAX = 4000;

/** Blank or absent: no bound. */
function timeOf(parameter: 'fromTime' | 'toTime', raw: unknown, current: number | null): number | null {
  if (raw === undefined) return current;
  if (raw === null || raw === '') return null;
  return asInteger(parameter, raw, 0, Number.MAX_SAFE_INTEGER, ' (a time in epoch milliseconds)');
}

/** Optional text: absent keeps `current`, blank clears it. */
function textOf(parameter: 'value' | 'description', raw: unknown, current: string | null): string | null {
  if (raw === undefined) return current;
  if (raw === null) return null;
  const text = checkText(parameter, asText(parameter, raw), { maxLength: PROPERTY_VALUE_MAX });
  return text === '' ? null : text;
}

/** A new property (`current` absent) or the change the fields sent make to one. */
export function propertyDraft(input: PropertyInput, current?: PropertyDraft): PropertyDraft {
  let name = current?.name;
  if (input.name !== undefined || current === undefined) {
    if (input.name === undefined || input.name === null)
      throw new InvalidParameterError('name', `Parameter 'name' is required`);
    name = checkText('name', asText('name', input.name), { maxLength: PROPERTY_NAME_MAX, required: true });
  }
  const draft: PropertyDraft = {
    name: name!,
    value: textOf('value', input.value, current?.value ?? null),
    description: textOf('description', input.description, current?.description ?? null),
    fromTime: timeOf('fromTime', input.fromTime, current?.fromTime ?? null),
    toTime: timeOf('toTime', input.toTime, current?.toTime ?? null),
  };
  if (draft.fromTime !== null && draft.toTime !== null && draft.toTime < draft.fromTime)
    throw new InvalidParameterError('toTime', `Parameter 'toTime' must not be before 'fromTime'`);
  return draft;
}

/** The list grammar's fields of `/properties` (docs/api.md#lists). */
export const PROPERTY_LIST: ListSpec<
  | 'id'
  | 'name'
  | 'value'
  | 'description'
  | 'fromTime'
  | 'toTime'
  | 'updateTime'
  | 'updatedById'
  | 'updatedByDisplayName'
> = {
  entity: 'properties',
  fields: {
    id: { type: 'number' },
    name: { type: 'string' },
    value: { type: 'string' },
    description: { type: 'string' },
    fromTime: { type: 'date' },
    toTime: { type: 'date' },
    updateTime: { type: 'date' },
    updatedById: { type: 'number' },
    updatedByDisplayName: { type: 'string' },
  },
  defaultSort: [{ field: 'id', direction: 'asc' }],
};
