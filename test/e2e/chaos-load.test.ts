/**
 * The chaos suite's load scenario in its quick form (`npm run chaos` runs it two minutes): 200
 * concurrent clients against `devicecloud local`.
 */
import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../chaos/scenarios/load.ts';
import { expectPromisesKept, log } from '../support/chaos.ts';

describe('load', () => {
  it('answers 200 concurrent clients without an error, in bounded memory', async () => {
    const report = await loadScenario({ quick: true, log, seconds: 15 });
    expectPromisesKept(report);
    expect(report.traffic.requests).toBeGreaterThan(1000);
  }, 180_000);
});
