/**
 * `npm run chaos [-- --quick] [-- --only faults,load,hostile,tenants] [-- --engines sqlite,postgres]`:
 * the proof that the service keeps its promises under faults, load and hostile input. Unlike the
 * benchmarks this is a test: it prints its figures (requests made, faults injected, inputs tried,
 * data lost) and exits 1 when anything was lost or broken.
 */
import { parseArgs } from 'node:util';
import { ENGINES } from '../test/support/engines.ts';
import dropTestSchemasLater from '../test/support/global-setup.ts';
import { faultsScenario } from './scenarios/faults.ts';
import { hostileScenario } from './scenarios/hostile.ts';
import { loadScenario } from './scenarios/load.ts';
import { tenantsScenario } from './scenarios/tenants.ts';
import { type ScenarioReport, printReports } from './support/report.ts';

const { values } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, only: { type: 'string' }, engines: { type: 'string' } },
});
const SCENARIOS = ['faults', 'load', 'hostile', 'tenants'];
const chosen = values.only === undefined ? SCENARIOS : values.only.split(',').map((name) => name.trim());
const engines =
  values.engines === undefined ? ENGINES : (values.engines.split(',').map((name) => name.trim()) as typeof ENGINES);
const wrong = [
  ...chosen.filter((name) => !SCENARIOS.includes(name)),
  ...engines.filter((engine) => !ENGINES.includes(engine)),
];
if (wrong.length > 0) {
  process.stderr.write(
    `unknown or unavailable: ${wrong.join(', ')}; scenarios are ${SCENARIOS.join(', ')}, engines here ${ENGINES.join(', ')}\n`,
  );
  process.exit(3);
}

// The hostile scenario's harnesses make PostgreSQL schemas, dropped at the end as the test suite does.
const dropTestSchemas = dropTestSchemasLater();
const started = performance.now();
const log = (line: string) => process.stderr.write(`[chaos] ${line}\n`);
const quick = values.quick;
const reports: ScenarioReport[] = [];
for (const name of chosen) {
  const scenarioStarted = performance.now();
  if (name === 'faults') for (const engine of engines) reports.push(await faultsScenario({ engine, quick, log }));
  if (name === 'load') reports.push(await loadScenario({ quick, log }));
  if (name === 'hostile') for (const engine of engines) reports.push(await hostileScenario({ engine, quick, log }));
  if (name === 'tenants') reports.push(await tenantsScenario({ quick, log }));
  log(`${name} took ${((performance.now() - scenarioStarted) / 1000).toFixed(1)} s`);
}
await dropTestSchemas();
printReports(reports, (line) => process.stdout.write(`${line}\n`));
const broken = reports.reduce((sum, report) => sum + report.lost.length + report.errors.length, 0);
log(
  `${((performance.now() - started) / 1000).toFixed(1)} s in all; ${broken === 0 ? 'every promise kept' : `${broken} promises broken`}`,
);
process.exit(broken === 0 ? 0 : 1);
