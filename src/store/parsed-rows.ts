/**
 * What a row's JSON column parses to, kept for the row's next read. CI polls a project's runs every
 * few seconds, and each read parsed and checked every run's stored settings again: a tenth of the
 * CPU of a 20-run list (docs/benchmarks.md, "API read path, fifth round").
 *
 * A value is kept by the row's id and used again only while the column holds the same text, so a
 * changed row (a migration, another server's write) is parsed afresh. Kept values are frozen, all
 * the way down: every read of the row shares one, and none may change it for the others.
 */
import { deepFreeze } from '../domain/deep-freeze.ts';

export type ParsedRows<T> = (id: number, text: string) => T;

export function parsedRows<T>(parse: (text: string, id: number) => T, limit = 4096): ParsedRows<T> {
  const kept = new Map<number, { readonly text: string; readonly value: T }>();
  return (id, text) => {
    const hit = kept.get(id);
    if (hit !== undefined && hit.text === text) return hit.value;
    const value = deepFreeze(parse(text, id));
    // The oldest first out: a bounded set, whatever the number of rows read.
    if (hit === undefined && kept.size >= limit) kept.delete(kept.keys().next().value!);
    kept.set(id, { text, value });
    return value;
  };
}
