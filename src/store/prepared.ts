/**
 * Statements of a fixed shape, built and compiled by Kysely once per store: only their parameters
 * change from call to call. Kysely builds a tree of frozen nodes and compiles it at every call,
 * which cost about a fifth of the CPU of a small API read, as much as SQLite running it
 * (docs/benchmarks.md). For the few statements every request runs (the API key's user, the
 * project's access check, its figures).
 */
import type { Compilable, CompiledQuery, Kysely } from 'kysely';

/** Where each parameter comes from: the argument of that index, or a value the build fixed. */
type Slot = { readonly arg: number } | { readonly value: unknown };

/**
 * `build` must use each argument only as a parameter value, as it is (no arithmetic, no
 * conditions on it, no serialising it): it is first called with stand-ins, and the compiled
 * statement's parameters say where each argument goes. A stand-in found changed, or missing,
 * throws at that first call.
 */
export function prepared<DB, A extends readonly unknown[], R>(
  db: Kysely<DB>,
  arity: A['length'],
  build: (...args: A) => Compilable<R>,
): (...args: A) => Promise<R[]> {
  let compiled: { readonly query: CompiledQuery<R>; readonly slots: readonly Slot[] } | undefined;
  return async (...args) => {
    compiled ??= compile(build, arity);
    const { query, slots } = compiled;
    const parameters = slots.map((slot) => ('arg' in slot ? args[slot.arg] : slot.value));
    return (await db.executeQuery<R>({ ...query, parameters })).rows;
  };
}

function compile<A extends readonly unknown[], R>(
  build: (...args: A) => Compilable<R>,
  arity: number,
): { query: CompiledQuery<R>; slots: Slot[] } {
  const standIns = Array.from({ length: arity }, (_, index) => `\u0000prepared-argument-${index}\u0000`);
  const query = build(...(standIns as unknown as A)).compile();
  const used = new Set<number>();
  const slots = query.parameters.map((value): Slot => {
    const arg = standIns.indexOf(value as string);
    if (arg !== -1) {
      used.add(arg);
      return { arg };
    }
    if (typeof value === 'string' && value.includes('\u0000'))
      throw new Error(`prepared statement: an argument was changed before it was bound (${query.sql})`);
    return { value };
  });
  if (query.sql.includes('\u0000'))
    throw new Error(`prepared statement: an argument is part of the SQL text (${query.sql})`);
  if (used.size !== arity) throw new Error(`prepared statement: not every argument is bound (${query.sql})`);
  return { query, slots };
}
