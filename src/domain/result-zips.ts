/**
 * Zips of results and file sets (docs/api.md#result-zips): which files a zip of a run's results
 * holds, and the names its entries get. Names come from tenants (file names an agent reported,
 * device names a device host reported), so each is cleaned into one safe path segment, and the
 * entries of one zip are made unique, before any zip writer sees them.
 */
import type { StoredSample } from './runs.ts';

/** What `POST …/runs/{id}/<kind>.zip` gathers from each current device session of the run. */
export const RUN_ZIP_KINDS = ['screenshots', 'logs', 'files', 'performance'] as const;
export type RunZipKind = (typeof RUN_ZIP_KINDS)[number];

/** The output tags each kind takes (none: every output file); performance also gets the samples as CSV. */
export const TAGS_OF_RUN_ZIP: Readonly<Record<RunZipKind, readonly string[]>> = {
  screenshots: ['screenshot'],
  logs: ['logs'],
  files: [],
  performance: ['performance'],
};

/** The bytes of one segment's name at most: under the 255 most file systems allow, with room for ` (12)`. */
const MAX_SEGMENT_BYTES = 200;
/** Half a UTF-16 pair: not a character, and not encodable as UTF-8. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** Names Windows keeps for devices, whatever their extension. */
const WINDOWS_DEVICES = /^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i;

/**
 * One path segment made of a tenant's name: no separators, no characters that a zip reader, a
 * terminal or another system's file names cannot hold, never empty, `.` or `..`, at most 200 bytes
 * of UTF-8 (the extension kept).
 */
export function entrySegment(name: string, fallback = 'file'): string {
  let cleaned = name
    .replace(LONE_SURROGATE, '\ufffd')
    .normalize('NFC')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f/\\<>:"|?*\u2028\u2029]/g, '_')
    .trim()
    // Windows drops trailing dots and spaces, which would make two names one.
    .replace(/[. ]+$/, '');
  if (cleaned === '' || /^\.+$/.test(cleaned)) cleaned = fallback;
  if (WINDOWS_DEVICES.test(cleaned)) cleaned = `_${cleaned}`;
  return truncateKeepingExtension(cleaned, MAX_SEGMENT_BYTES);
}

/**
 * Gives every path of one zip a name of its own, in order: a path already taken (compared the way
 * case-insensitive file systems do) gets ` (2)`, ` (3)`, … before its extension.
 */
export class EntryNames {
  private readonly taken = new Set<string>();

  add(folder: string | null, segment: string): string {
    const prefix = folder === null ? '' : `${folder}/`;
    let candidate = segment;
    for (let copy = 2; this.taken.has(key(prefix + candidate)); copy++) {
      const { stem, extension } = splitExtension(segment);
      const suffix = ` (${copy})`;
      candidate =
        truncateKeepingExtension(stem, MAX_SEGMENT_BYTES - utf8Length(suffix + extension)) + suffix + extension;
    }
    this.taken.add(key(prefix + candidate));
    return prefix + candidate;
  }

  /** A folder of its own for each device session: `<id>-<device name>`. */
  folder(deviceRunId: number, deviceName: string): string {
    return this.add(null, entrySegment(`${deviceRunId}-${deviceName}`, String(deviceRunId)));
  }
}

const key = (path: string) => path.normalize('NFC').toLowerCase();

/** Zip writers deflate what compresses; media and archives are stored as they are (deflating them only costs CPU). */
export function worthCompressing(name: string, mimetype: string): boolean {
  if (/^(image|video|audio)\//.test(mimetype)) return false;
  const extension = splitExtension(name).extension.toLowerCase();
  return !STORED_EXTENSIONS.has(extension);
}

const STORED_EXTENSIONS = new Set([
  '.png',
  '.jpg',
  '.jpeg',
  '.gif',
  '.webp',
  '.mp4',
  '.mov',
  '.webm',
  '.mkv',
  '.zip',
  '.apk',
  '.aab',
  '.ipa',
  '.jar',
  '.gz',
  '.tgz',
  '.xz',
  '.bz2',
  '.7z',
]);

/**
 * The samples of one device session as CSV (RFC 4180, a header line): `timestamp` (epoch ms),
 * `cpuUsage` (0..1), `memUsage` (KB), `packageName`. A package name is the app's, so a cell that
 * a spreadsheet would run as a formula (`=`, `+`, `-`, `@`) is written with a leading `'`.
 */
export function performanceCsv(samples: readonly StoredSample[]): string {
  const lines = ['timestamp,cpuUsage,memUsage,packageName'];
  for (const sample of samples) {
    lines.push(
      [
        String(sample.timestamp),
        String(sample.cpuUsage),
        sample.memUsage === null ? '' : String(sample.memUsage),
        csvText(sample.packageName),
      ].join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

function csvText(value: string | null): string {
  if (value === null || value === '') return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

function splitExtension(name: string): { stem: string; extension: string } {
  const dot = name.lastIndexOf('.');
  // A leading dot (`.env`) is a name, not an extension; an over-long "extension" is part of the name.
  if (dot <= 0 || name.length - dot > 16) return { stem: name, extension: '' };
  return { stem: name.slice(0, dot), extension: name.slice(dot) };
}

function truncateKeepingExtension(name: string, maxBytes: number): string {
  if (utf8Length(name) <= maxBytes) return name;
  const { stem, extension } = splitExtension(name);
  return truncateUtf8(stem, Math.max(1, maxBytes - utf8Length(extension))) + extension;
}

/** The longest prefix of whole code points within `maxBytes` of UTF-8. */
function truncateUtf8(text: string, maxBytes: number): string {
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = utf8Length(char);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
