/**
 * The neutral representation every presenter produces and both encoders read. An entity is a
 * plain object whose fields are in wire order, tagged with its XML type name under a symbol key:
 * JSON.stringify skips symbol keys, so JSON needs no conversion at all, and the XML encoder reads
 * the tag to name the root element and the items of arrays (docs/api.md#formats).
 */
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
