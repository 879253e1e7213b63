/**
 * A seeded pseudo-random generator (mulberry32): generated inputs are the same on every run with
 * the same seed, so a failure found by a generated test reproduces.
 */
export interface Prng {
  readonly seed: number;
  /** [0, 1) */
  next(): number;
  int(below: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
}

export function prng(seed: number): Prng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    int: (below) => Math.floor(next() * below),
    pick: (items) => items[Math.floor(next() * items.length)]!,
    chance: (probability) => next() < probability,
  };
}

/** The seed from `name` in the environment (to explore other inputs), else `fallback`. */
export function seedFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const seed = Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`${name} must be an integer, not '${raw}'`);
  return seed;
}
