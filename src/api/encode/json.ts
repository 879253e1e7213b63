/**
 * JSON is the representation itself: symbol-keyed type tags are invisible to JSON.stringify.
 *
 * JSON can carry every character, controls included (as `\u001b`), so text is kept exactly. A
 * lone surrogate is not a character: JSON.stringify writes it as an escape such as `\ud800`,
 * which strict decoders refuse (Rust's serde_json, for one), so it becomes U+FFFD, as it does
 * in XML (docs/api.md#text-that-xml-cannot-carry).
 */
import fastJsonStringify from 'fast-json-stringify';
import { KIND, type Rep } from '../present/representation.ts';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export type Stringify = (value: unknown) => string;

/**
 * `stringify` is the route's serializer compiled from its answer's schema (jsonSerializer below):
 * it writes the schema's fields only, in its order, as JSON.stringify would write them.
 */
export function encodeJson(value: Rep, stringify: Stringify = JSON.stringify): string {
  // A bare list (repList) is answered as a plain JSON array, not wrapped.
  const json = value[KIND] === PLAIN_ARRAY ? stringify(value.items) : stringify(value);
  return json.includes('\\ud') ? json.replace(LONE_SURROGATE_ESCAPE, '$1\ufffd') : json;
}

// JSON.stringify escapes lone surrogates only (a pair is written as it is), in lower case; an
// escape preceded by an odd number of backslashes is text (`\\ud800` is the six characters).
// The compiled serializers escape strings with JSON.stringify too.
const LONE_SURROGATE_ESCAPE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/** Kind used by presenters for answers that are plain arrays in JSON (docs/api.md#device-runs-and-device-sessions). */
export const PLAIN_ARRAY = 'list';

const compiled = new WeakMap<object, Stringify>();

/**
 * Fastify's serializer compiler for the API's routes. Compiling is slow (a few milliseconds a
 * schema) and every route is registered under up to four paths, so a schema is compiled once, on
 * the first answer that needs it, rather than for every path when the app starts.
 */
export function jsonSerializer({ schema }: { schema: object }): Stringify {
  let stringify: Stringify | undefined;
  return (value) => {
    stringify ??= compiled.get(schema) ?? compile(schema);
    return stringify(value);
  };
}

function compile(schema: object): Stringify {
  const stringify = fastJsonStringify(
    forSerializer(schema as Schema) as Parameters<typeof fastJsonStringify>[0],
  ) as Stringify;
  compiled.set(schema, stringify);
  return stringify;
}

interface Schema {
  readonly anyOf?: unknown;
  readonly additionalProperties?: unknown;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly items?: Schema;
}

/**
 * The compiled serializer writes an object's declared fields required ones first, and picks a
 * branch of a union by validating the value against each. So an open object (a stored run config,
 * whose fields are its own) and a union (a user with or without the key) are written by
 * JSON.stringify, in the order the presenter gave; the rest of the answer is compiled.
 */
function forSerializer(schema: Schema): Schema {
  if (schema.anyOf !== undefined || schema.additionalProperties === true) return {};
  const { properties, items } = schema;
  return {
    ...schema,
    ...(properties !== undefined && {
      properties: Object.fromEntries(
        Object.entries(properties).map(([name, property]) => [name, forSerializer(property)]),
      ),
    }),
    ...(items !== undefined && { items: forSerializer(items) }),
  };
}
