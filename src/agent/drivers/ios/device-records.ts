/**
 * What the agent remembers about each iOS device, under its data dir (`devices/<udid>/`): the
 * baseline, recorded the first time the agent sees the device, of the apps installed on it (the
 * operator's, WebDriverAgent among them) and its language and region. Cleaning puts the device
 * back to it. Delete the file to record a new baseline (after installing another tool app, say).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Language } from './go-ios-output.ts';

export interface Baseline {
  readonly apps: readonly string[];
  readonly language: Language;
  readonly recordedAt: string;
}

export class DeviceRecords {
  constructor(private readonly dir: string) {}

  baselineFile(udid: string): string {
    return path.join(this.dir, 'devices', udid.replace(/[^A-Za-z0-9-]/g, '_'), 'baseline.json');
  }

  baseline(udid: string): Baseline | null {
    const file = this.baselineFile(udid);
    if (!fs.existsSync(file)) return null;
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Baseline;
    if (!Array.isArray(parsed.apps) || typeof parsed.language?.locale !== 'string')
      throw new Error(`${file} is not a baseline; delete it to record a new one`);
    return parsed;
  }

  saveBaseline(udid: string, baseline: Baseline): void {
    const file = this.baselineFile(udid);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // Written whole, then renamed: an agent killed mid-write leaves the old baseline or none, never half of one.
    const partial = `${file}.${process.pid}.part`;
    fs.writeFileSync(partial, `${JSON.stringify(baseline, null, 2)}\n`);
    fs.renameSync(partial, file);
  }
}
