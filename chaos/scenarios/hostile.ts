/**
 * Hostile input at volume: the generator of the integration suite (test/support/hostile.ts), run
 * with several seeds so that each run of the chaos suite tries inputs the test suite's fixed seed
 * does not. Failures name their seed, so `HOSTILE_SEED=<seed>` reproduces them in the test.
 */
import { createHarness } from '../../test/support/harness.ts';
import { driveHostileInput } from '../../test/support/hostile-drive.ts';
import type { ScenarioReport } from '../support/report.ts';
import { newTraffic } from '../support/traffic.ts';

export async function hostileScenario(options: {
  engine: 'sqlite' | 'postgres';
  quick: boolean;
  log: (line: string) => void;
}): Promise<ScenarioReport> {
  const traffic = newTraffic();
  const errors: string[] = [];
  const base = Date.now() % 1_000_000;
  const seeds = Array.from({ length: options.quick ? 1 : 3 }, (_, i) => base + i);
  let seconds = 0;
  for (const seed of seeds) {
    options.log(`hostile input on ${options.engine}, seed ${seed}`);
    const h = await createHarness(options.engine);
    try {
      const report = await driveHostileInput(h, { seed });
      traffic.requests += report.tried;
      seconds += report.seconds;
      errors.push(...report.failures.slice(0, 20).map((failure) => `seed ${seed}: ${failure}`));
      if (report.failures.length > 20) errors.push(`seed ${seed}: … and ${report.failures.length - 20} more`);
    } finally {
      await h.close();
    }
  }
  return {
    name: `hostile input (${options.engine})`,
    traffic,
    faults: 0,
    inputs: traffic.requests,
    lost: [],
    errors,
    figures: { seeds: seeds.join(', '), seconds: seconds },
    skipped: [],
  };
}
