/**
 * `npm run bench [-- --quick] [-- --only api,polling,listing,scheduling,overhead,memory,startup,screens,webdriver,fleet,live,video]`: runs the
 * benchmark suites, prints a table and writes the figures as JSON under bench/results/.
 * These are measurements, not tests: nothing fails on a figure.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { apiRead } from './suites/api-read.ts';
import { fleet } from './suites/fleet.ts';
import { listing } from './suites/listing.ts';
import { live } from './suites/live.ts';
import { video } from './suites/live-video.ts';
import { memory } from './suites/memory.ts';
import { overhead } from './suites/overhead.ts';
import { polling } from './suites/polling.ts';
import { scheduling } from './suites/scheduling.ts';
import { screens } from './suites/screens.ts';
import { startup } from './suites/startup.ts';
import { webdriver } from './suites/webdriver.ts';
import { type Figure, type Suite, machine, table, writeResults } from './support/report.ts';

const SUITES: Record<string, Suite> = {
  api: apiRead,
  polling,
  listing,
  scheduling,
  overhead,
  memory,
  startup,
  screens,
  webdriver,
  fleet,
  live,
  video,
};

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } } });
const chosen = values.only === undefined ? Object.keys(SUITES) : values.only.split(',').map((name) => name.trim());
const unknown = chosen.filter((name) => !(name in SUITES));
if (unknown.length > 0) {
  process.stderr.write(`unknown suite ${unknown.join(', ')}; the suites are ${Object.keys(SUITES).join(', ')}\n`);
  process.exit(3);
}

const started = performance.now();
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
// The machine's load beside every suite: on a shared machine a figure means little without it.
const load = () =>
  `load ${os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}`;
const { cores, node } = machine();
log(`${cores} cores, Node ${node}${values.quick ? ', quick' : ''}, ${load()}`);
const figures: Figure[] = [];
for (const name of chosen) {
  const suiteStarted = performance.now();
  log(`${name}…`);
  figures.push(...(await SUITES[name]!({ quick: values.quick, log })));
  log(`${name} took ${((performance.now() - suiteStarted) / 1000).toFixed(1)} s, ${load()}`);
}
process.stdout.write(`\n${table(figures)}\n\n`);
const file = writeResults(figures, { quick: values.quick });
log(`written to ${file}; ${((performance.now() - started) / 1000).toFixed(1)} s in all`);
