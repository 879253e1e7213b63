/**
 * XML from the neutral representation (docs/api.md#formats): one root element named after the entity type,
 * one child element per non-null field, arrays as a wrapper holding one element per item named
 * after the item's type (`<item>` for strings and numbers).
 *
 * Written directly rather than through a generic builder: building an intermediate tree for a
 * general-purpose builder took a third of the CPU of an XML list request (docs/benchmarks.md).
 * Carriage return is escaped because XML parsers turn a raw CR into LF, and text must round-trip
 * exactly. Text comes from anywhere (JUnit output, agents), so characters XML 1.0 cannot carry
 * are replaced here (domain/xml-text.ts), and a name that came from data (a stored config's keys)
 * is made a valid element name: every answer parses.
 */
import { escapeXmlText, xmlName } from '../../domain/xml-text.ts';
import { KIND, type Rep, type Value, isRep } from '../present/representation.ts';
import { PLAIN_ARRAY } from './json.ts';

export const XML_CONTENT_TYPE = 'application/xml; charset=utf-8';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

// Names are nearly always our own few hundred type and field names: checked once each.
const names = new Map<string, string>();
const NAMES_LIMIT = 2048;

function elementName(name: string): string {
  let checked = names.get(name);
  if (checked === undefined) {
    checked = xmlName(name);
    if (names.size >= NAMES_LIMIT) names.clear();
    names.set(name, checked);
  }
  return checked;
}

export function encodeXml(value: Rep): string {
  const kind = elementName(value[KIND]);
  const body = value[KIND] === PLAIN_ARRAY ? arrayContent(value.items as readonly Value[]) : entityContent(value);
  return `${DECLARATION}<${kind}>${body}</${kind}>`;
}

function entityContent(entity: Rep): string {
  let out = '';
  for (const field of Object.keys(entity)) {
    const value = entity[field]!;
    if (value === null) continue;
    const name = elementName(field);
    out += `<${name}>${valueContent(value)}</${name}>`;
  }
  return out;
}

function valueContent(value: Exclude<Value, null>): string {
  if (typeof value === 'string') return escapeXmlText(value);
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return arrayContent(value);
  return entityContent(value as Rep);
}

function arrayContent(items: readonly Value[]): string {
  let out = '';
  for (const item of items) {
    if (item === null) continue;
    const name = isRep(item) ? elementName(item[KIND]) : 'item';
    out += `<${name}>${valueContent(item)}</${name}>`;
  }
  return out;
}
