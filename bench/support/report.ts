/**
 * What a benchmark suite reports: rows of figures, each optionally against a baseline measured in
 * the same run (the ratio is what means something on a shared, noisy machine) and a goal.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Figure {
  readonly suite: string;
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** The same measure of the baseline, in the same run. */
  readonly baseline?: number;
  /** value / baseline, or what the suite defines as its ratio. */
  readonly ratio?: number;
  /** The goal, in words, and whether this run met it. */
  readonly goal?: string;
  readonly met?: boolean;
}

export interface SuiteOptions {
  readonly quick: boolean;
  readonly log: (message: string) => void;
}

export type Suite = (options: SuiteOptions) => Promise<Figure[]>;

export function machine() {
  return {
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

const format = (value: number): string =>
  Number.isInteger(value)
    ? value.toLocaleString('en-US')
    : Math.abs(value) >= 100
      ? Math.round(value).toLocaleString('en-US')
      : value.toPrecision(3);

export function table(figures: readonly Figure[]): string {
  const rows = figures.map((figure) => [
    figure.suite,
    figure.name,
    `${format(figure.value)} ${figure.unit}`,
    figure.baseline === undefined ? '' : `${format(figure.baseline)} ${figure.unit}`,
    figure.ratio === undefined ? '' : figure.ratio.toFixed(2),
    figure.goal === undefined ? '' : `${figure.goal} ${figure.met ? 'met' : 'NOT MET'}`,
  ]);
  const header = ['suite', 'measure', 'value', 'baseline', 'ratio', 'goal'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/** Writes the figures with the machine's description under bench/results/, and returns the path. */
export function writeResults(figures: readonly Figure[], options: { quick: boolean }): string {
  const directory = path.join(import.meta.dirname, '..', 'results');
  fs.mkdirSync(directory, { recursive: true });
  const file = path.join(
    directory,
    `${new Date().toISOString().replace(/[:.]/g, '-')}${options.quick ? '-quick' : ''}.json`,
  );
  fs.writeFileSync(
    file,
    `${JSON.stringify({ date: new Date().toISOString(), quick: options.quick, machine: machine(), figures }, null, 2)}\n`,
  );
  return file;
}

/** Percentile of sorted-or-not samples (nearest rank). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
