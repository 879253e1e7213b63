/** What a chaos scenario found: its figures, and every broken promise, in words. */
import fs from 'node:fs';
import path from 'node:path';
import type { Traffic } from './traffic.ts';

export interface ScenarioReport {
  readonly name: string;
  readonly traffic: Traffic;
  /** Processes killed, database restarts. */
  readonly faults: number;
  /** Generated hostile inputs sent. */
  readonly inputs: number;
  /** Data lost or left inconsistent: uploads, runs, device runs executed twice, devices stuck. */
  readonly lost: readonly string[];
  /** Other broken promises: 5xx answers, crashes, errors under load, unbounded memory. */
  readonly errors: readonly string[];
  /** Named figures for the table (counts, milliseconds, MiB). */
  readonly figures: Readonly<Record<string, number | string>>;
  /** What was not exercised, and why (printed, never silent). */
  readonly skipped: readonly string[];
}

export function printReports(reports: readonly ScenarioReport[], write: (line: string) => void): void {
  write('');
  write('| scenario | requests | unanswered (faults) | faults injected | inputs tried | data lost | errors |');
  write('|---|---|---|---|---|---|---|');
  for (const report of reports) {
    write(
      `| ${report.name} | ${report.traffic.requests} | ${report.traffic.unanswered} | ${report.faults} | ${report.inputs} | ${report.lost.length} | ${report.errors.length} |`,
    );
  }
  const total = (pick: (report: ScenarioReport) => number) => reports.reduce((sum, report) => sum + pick(report), 0);
  write(
    `| **all** | ${total((r) => r.traffic.requests)} | ${total((r) => r.traffic.unanswered)} | ${total((r) => r.faults)} | ${total((r) => r.inputs)} | ${total((r) => r.lost.length)} | ${total((r) => r.errors.length)} |`,
  );
  for (const report of reports) {
    write('');
    write(`${report.name}:`);
    for (const [name, value] of Object.entries(report.figures))
      write(`  ${name}: ${typeof value === 'number' && !Number.isInteger(value) ? value.toFixed(1) : value}`);
    const statuses = [...report.traffic.statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}×${count}`);
    if (statuses.length > 0) write(`  answers: ${statuses.join(' ')}`);
    for (const skipped of report.skipped) write(`  NOT EXERCISED: ${skipped}`);
    for (const problem of report.lost) write(`  DATA LOST: ${problem}`);
    for (const problem of report.errors) write(`  ERROR: ${problem}`);
  }
}

/** Where the processes' output goes when a scenario broke a promise, for the person who looks next. */
export function keepLogs(name: string, outputs: Readonly<Record<string, string>>, log: (line: string) => void): void {
  const dir = path.resolve(import.meta.dirname, '../../test-output/chaos');
  fs.mkdirSync(dir, { recursive: true });
  for (const [process, output] of Object.entries(outputs)) {
    const file = path.join(dir, `${name}-${process}.log`);
    fs.writeFileSync(file, output);
    log(`  the ${process}'s output is in ${path.relative(process === '' ? '.' : path.resolve('.'), file)}`);
  }
}
