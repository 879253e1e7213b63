/**
 * XML from the neutral representation (API.md §1): one root element named after the entity type,
 * one child element per non-null field, arrays as a wrapper holding one element per item named
 * after the item's type (`<item>` for strings and numbers). Escaping is fast-xml-parser's; we add
 * carriage return to its entity table because XML parsers turn a raw CR into LF, and text must
 * round-trip exactly. Other control characters never get this far (domain/text.ts refuses them).
 */
import { XMLBuilder } from 'fast-xml-parser';
import { KIND, type Rep, type Value, isRep } from '../present/representation.ts';
import { PLAIN_ARRAY } from './json.ts';

export const XML_CONTENT_TYPE = 'application/xml; charset=utf-8';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

const builder = new XMLBuilder({
  processEntities: true,
  suppressBooleanAttributes: false,
  entities: [
    { regex: /&/g, val: '&amp;' },
    { regex: />/g, val: '&gt;' },
    { regex: /</g, val: '&lt;' },
    { regex: /'/g, val: '&apos;' },
    { regex: /"/g, val: '&quot;' },
    { regex: /\r/g, val: '&#13;' },
  ],
} as ConstructorParameters<typeof XMLBuilder>[0]);

type XmlNode = string | { [name: string]: XmlNode | XmlNode[] };

export function encodeXml(value: Rep): string {
  const kind = value[KIND];
  const root = kind === PLAIN_ARRAY ? arrayNode(value.items as readonly Value[]) : entityNode(value);
  return DECLARATION + builder.build({ [kind]: root });
}

function entityNode(entity: Rep): XmlNode {
  const node: { [name: string]: XmlNode | XmlNode[] } = {};
  for (const field of Object.keys(entity)) {
    const value = entity[field]!;
    if (value === null) continue;
    node[field] = valueNode(value);
  }
  return node;
}

function valueNode(value: Exclude<Value, null>): XmlNode {
  if (Array.isArray(value)) return arrayNode(value);
  if (isRep(value as Value)) return entityNode(value as Rep);
  return String(value);
}

function arrayNode(items: readonly Value[]): XmlNode {
  // Items are grouped under their element name; the arrays we present are homogeneous, so the
  // grouping keeps their order.
  const node: { [name: string]: XmlNode[] } = {};
  for (const item of items) {
    if (item === null) continue;
    const name = isRep(item) ? item[KIND] : 'item';
    (node[name] ??= []).push(valueNode(item));
  }
  return node;
}
