/**
 * The generated half of the hostile-input suite (test/integration/hostile-input*.test.ts): every
 * operation driven with malformed input by support/hostile-drive.ts, on one engine. One file per
 * engine, so that vitest drives both at once on two workers (each is minutes of CPU); on PostgreSQL,
 * the slower, a file for the reads (GET) and one for the writes.
 *
 * HOSTILE_SEED=<n> explores other inputs, HOSTILE_ONLY='<METHOD> <path>' narrows a run to one
 * operation to reproduce a failure, HOSTILE_REPORT=<file> writes all failures.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from './engines.ts';
import type { Operation } from './hostile.ts';
import { type Harness, createHarness } from './harness.ts';
import { SPEC_OF } from './hostile.ts';
import { type HostileReport, driveHostileInput } from './hostile-drive.ts';
import { seedFrom } from './prng.ts';

const SEED = seedFrom('HOSTILE_SEED', 20260115);
const ONLY = process.env.HOSTILE_ONLY;
/** Where to write every failure (the assertion shows the first 40). */
const REPORT = process.env.HOSTILE_REPORT;

/** Which operations a file drives: all of them, or the reads or the writes alone. */
export type HostilePart = 'all' | 'reads' | 'writes';

const PARTS: Record<HostilePart, ((operation: Operation) => boolean) | undefined> = {
  all: undefined,
  reads: (operation) => operation.method === 'GET',
  writes: (operation) => operation.method !== 'GET',
};

export function describeHostileInput(engine: Engine, part: HostilePart = 'all'): void {
  const name = part === 'all' ? engine : `${engine}, ${part}`;
  describe(`hostile input (${name})`, () => {
    let h: Harness;
    let report: HostileReport;

    beforeAll(async () => {
      h = await createHarness(engine);
      report = await driveHostileInput(h, { seed: SEED, only: ONLY, part: PARTS[part] });
      // A backstop, not a budget: the driving is CPU-bound (every operation, many inputs, a table
      // snapshot after each), about 100 s on PostgreSQL on an idle 2-core machine and over 240 s
      // with the rest of the suite beside it.
    }, 900_000);
    afterAll(async () => h?.close());

    it('documents every route of the route table', () => {
      const paths = new Set(report.documented.map((operation) => `${operation.method} ${operation.path}`));
      expect([...SPEC_OF.keys()].filter((key) => !paths.has(key))).toEqual([]);
      expect(report.documented.length).toBeGreaterThan(100);
    });

    it('answers generated malformed input on every operation without a 5xx, in the negotiated error shape, writing nothing', () => {
      const { tried, accepted, operations, reseeded, failures, seconds } = report;
      console.info(
        `hostile input (${name}): ${tried} inputs over ${operations} operations in ${seconds.toFixed(1)} s, seed ${SEED}; ` +
          `${accepted} accepted (odd but valid), ${tried - accepted} refused, ${reseeded} fresh worlds, ${failures.length} failures`,
      );
      if (REPORT !== undefined)
        fs.writeFileSync(`${REPORT}.${part === 'all' ? engine : `${engine}-${part}`}.txt`, failures.join('\n'));
      expect(tried).toBeGreaterThan(operations * 10);
      expect(failures.slice(0, 40), `${failures.length} failures (seed ${SEED})`).toEqual([]);
    });
  });
}
