/**
 * The neutral representation every presenter produces and both encoders read. An entity is a
 * plain object whose fields are in wire order, tagged with its XML type name under a symbol key:
 * JSON.stringify skips symbol keys, so JSON needs no conversion at all, and the XML encoder reads
 * the tag to name the root element and the items of arrays (docs/api.md#formats).
 */
import Type, { type Static, type TObject, type TProperties, type TSchema } from 'typebox';

export const KIND: unique symbol = Symbol('kind');

export type Scalar = string | number | boolean | null;
export type Value = Scalar | Rep | readonly Value[];

export interface Rep {
  readonly [KIND]: string;
  readonly [field: string]: Value;
}

/** Tags `fields` (in the order given) as an entity of XML type `kind`, e.g. `apiProject`. */
export function rep(kind: string, fields: Record<string, Value>): Rep {
  (fields as Record<symbol, string>)[KIND] = kind;
  return fields as Rep;
}

export function isRep(value: Value): value is Rep {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A plain JSON array answer (e.g. performance samples), rendered as `<kind>` items in XML. */
export function repList(kind: string, items: readonly Value[]): Rep {
  return rep(kind, { items });
}

/**
 * The schema of an entity: the fields its presenter writes, in wire order. It is the one source of
 * the presenter's field types (`entity` checks them), of the OpenAPI document's answer shapes, and
 * of the compiled JSON serializer, which writes exactly the fields declared here and drops any
 * other: test/integration/openapi-answers.test.ts checks presented answers against it strictly.
 */
export function entitySchema<P extends TProperties>(
  kind: string,
  properties: P,
  options: { readonly title?: string; readonly description?: string } = {},
) {
  // `title` names the schema for client generators; `xml.name` is the element XML answers use.
  return Type.Object(properties, {
    title: options.title ?? kind,
    xml: { name: kind },
    ...(options.description !== undefined && { description: options.description }),
  });
}

/** Tags `fields`, checked against `schema` by the compiler, as an entity of the schema's kind. */
export function entity<S extends TObject>(schema: S, fields: Static<S>): Rep {
  return rep((schema as { xml?: { name: string } }).xml!.name, fields as Record<string, Value>);
}

/** An entity nested in another: the full schema in the document, a Rep to the presenter's types. */
export const Nested = (schema: TObject) => Type.Unsafe<Rep>(schema);

/**
 * A field that may be null, as a type list (`["string", "null"]`) rather than `anyOf`: OpenAPI
 * 3.1 reads it, and the compiled serializer checks for null directly instead of trying each branch.
 */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [(schema as unknown as { type: string }).type, 'null'] });
}
