/**
 * XML from the neutral representation (API.md §1): one root element named after the entity type,
 * one child element per non-null field, arrays as a wrapper holding one element per item named
 * after the item's type (`<item>` for strings and numbers).
 *
 * Written directly rather than through a generic builder: element names are our own field and
 * type names, so only text needs escaping, and building an intermediate tree for a general-purpose
 * builder took a third of the CPU of an XML list request (docs/benchmarks.md). Carriage return is
 * escaped because XML parsers turn a raw CR into LF, and text must round-trip exactly; other
 * control characters never get this far (domain/text.ts refuses them).
 */
import { KIND, type Rep, type Value, isRep } from '../present/representation.ts';
import { PLAIN_ARRAY } from './json.ts';

export const XML_CONTENT_TYPE = 'application/xml; charset=utf-8';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

const SPECIAL = /[&<>"'\r]/g;
const ENTITY: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#13;' };
const escapeChar = (char: string): string => ENTITY[char]!;

export function escapeText(text: string): string {
  SPECIAL.lastIndex = 0;
  return SPECIAL.test(text) ? text.replace(SPECIAL, escapeChar) : text;
}

export function encodeXml(value: Rep): string {
  const kind = value[KIND];
  const body = kind === PLAIN_ARRAY ? arrayContent(value.items as readonly Value[]) : entityContent(value);
  return `${DECLARATION}<${kind}>${body}</${kind}>`;
}

function entityContent(entity: Rep): string {
  let out = '';
  for (const field of Object.keys(entity)) {
    const value = entity[field]!;
    if (value === null) continue;
    out += `<${field}>${valueContent(value)}</${field}>`;
  }
  return out;
}

function valueContent(value: Exclude<Value, null>): string {
  if (typeof value === 'string') return escapeText(value);
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return arrayContent(value);
  return entityContent(value as Rep);
}

function arrayContent(items: readonly Value[]): string {
  let out = '';
  for (const item of items) {
    if (item === null) continue;
    const name = isRep(item) ? item[KIND] : 'item';
    out += `<${name}>${valueContent(item)}</${name}>`;
  }
  return out;
}
