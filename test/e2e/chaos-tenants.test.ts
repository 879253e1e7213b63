/**
 * The chaos suite's hostile tenants scenario in its quick form: a hostile tenant's packages beside
 * an honest tenant's runs on a public cloud's device hosts.
 */
import { describe, expect, it } from 'vitest';
import { tenantsScenario } from '../../chaos/scenarios/tenants.ts';
import { expectPromisesKept, log } from '../support/chaos.ts';

describe('hostile tenants', () => {
  it('refuses every attack of one tenant from inside and outside its runs, while an honest tenant runs on the same hosts', async () => {
    const report = await tenantsScenario({ quick: true, log });
    expectPromisesKept(report);
    // The attacks ran on every Android device of both hosts (virtual and adb) and reported.
    expect(report.figures['Android devices']).toBe(6);
    expect(report.figures['attempts from inside']).toBeGreaterThanOrEqual(6 * 9);
  }, 300_000);
});
