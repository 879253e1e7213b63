/**
 * Reading untrusted zip files (APKs, IPAs, test packages) without trusting them: entry names that
 * escape the destination or could not be written (duplicates, a name both a file and a folder,
 * over-long names), symbolic links, too many entries, and archives that expand far beyond their
 * size (zip bombs, one entry or many) are refused before anything is written. The same checks run
 * at upload (from the central directory) and again on the device host, where extraction also
 * counts the bytes it actually writes: a directory that lies about sizes gets no further than its
 * limits. yauzl streams entries, checks that each inflates to exactly its declared size, and
 * rejects absolute and `..` names itself; the limits below are ours.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { DEFAULT_ZIP_LIMITS, type ZipLimits } from '../domain/zip-limits.ts';

export type ZipProblem =
  'CORRUPT' | 'PATH_TRAVERSAL' | 'SYMLINK' | 'TOO_MANY_ENTRIES' | 'TOO_LARGE' | 'DUPLICATE_ENTRY' | 'BAD_NAME';

export class ZipError extends Error {
  constructor(
    readonly problem: ZipProblem,
    message: string,
  ) {
    super(message);
    this.name = 'ZipError';
  }
}

const ENTRY_RATIO_FLOOR = 1024 * 1024;
const ARCHIVE_RATIO_FLOOR = 64 * 1024 * 1024;
/** File systems refuse longer names (a component over 255 bytes), and paths this long are not a test package's. */
const MAX_COMPONENT_BYTES = 255;
const MAX_NAME_BYTES = 1024;

export interface ZipEntryInfo {
  readonly name: string;
  readonly size: number;
  readonly compressedSize: number;
  readonly isDirectory: boolean;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

function open(zipPath: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(
      zipPath,
      { lazyEntries: true, autoClose: false, strictFileNames: true, validateEntrySizes: true },
      (error, zip) => {
        if (error || zip === undefined)
          reject(new ZipError('CORRUPT', `not a readable zip file: ${error?.message ?? 'unknown error'}`));
        else resolve(zip);
      },
    );
  });
}

/** Visits every entry in order; `visit` may read the entry before the next one is read. */
async function eachEntry(
  zipPath: string,
  visit: (entry: Entry, zip: ZipFile) => Promise<boolean | void>,
): Promise<void> {
  const zip = await open(zipPath);
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (error: Error) => reject(error instanceof ZipError ? error : classify(error)));
      zip.on('end', () => resolve());
      zip.on('entry', (entry: Entry) => {
        visit(entry, zip).then(
          (stop) => (stop === true ? resolve() : zip.readEntry()),
          (error: unknown) => reject(error instanceof ZipError ? error : classify(error as Error)),
        );
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

function classify(error: Error): ZipError {
  const message = error.message;
  if (/invalid relative path|absolute path|invalid characters/i.test(message))
    return new ZipError('PATH_TRAVERSAL', `unsafe entry name: ${message}`);
  return new ZipError('CORRUPT', `corrupt zip file: ${message}`);
}

function isSymlink(entry: Entry): boolean {
  return ((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK;
}

function isDirectory(entry: Entry): boolean {
  return entry.fileName.endsWith('/');
}

function checkEntry(entry: Entry, limits: ZipLimits): void {
  if (isSymlink(entry))
    throw new ZipError('SYMLINK', `the zip holds a symbolic link (${entry.fileName}); links are not allowed`);
  const normalized = path.posix.normalize(entry.fileName);
  if (
    normalized.startsWith('../') ||
    normalized === '..' ||
    path.posix.isAbsolute(normalized) ||
    entry.fileName.includes('\\')
  ) {
    throw new ZipError('PATH_TRAVERSAL', `unsafe entry name: ${entry.fileName}`);
  }
  if (
    normalized === '.' ||
    normalized === '' ||
    Buffer.byteLength(entry.fileName) > MAX_NAME_BYTES ||
    normalized.split('/').some((part) => Buffer.byteLength(part) > MAX_COMPONENT_BYTES)
  ) {
    throw new ZipError('BAD_NAME', `entry name cannot be unpacked: ${entry.fileName.slice(0, 200)}`);
  }
  if (
    !isDirectory(entry) &&
    entry.uncompressedSize > ENTRY_RATIO_FLOOR &&
    entry.uncompressedSize > entry.compressedSize * limits.maxRatio
  ) {
    throw new ZipError(
      'TOO_LARGE',
      `entry ${entry.fileName} expands ${Math.round(entry.uncompressedSize / Math.max(1, entry.compressedSize))} times its size (a zip bomb?)`,
    );
  }
}

/** Lists the entries, checking names and the limits (nothing is decompressed). */
export async function listEntries(zipPath: string, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ZipEntryInfo[]> {
  const entries: ZipEntryInfo[] = [];
  let total = 0;
  let compressed = 0;
  await eachEntry(zipPath, async (entry) => {
    checkEntry(entry, limits);
    total += entry.uncompressedSize;
    compressed += entry.compressedSize;
    if (entries.length >= limits.maxEntries)
      throw new ZipError('TOO_MANY_ENTRIES', `the zip has more than ${limits.maxEntries} entries`);
    if (total > limits.maxTotalBytes)
      throw new ZipError('TOO_LARGE', `the zip expands to more than ${limits.maxTotalBytes} bytes`);
    entries.push({
      name: entry.fileName,
      size: entry.uncompressedSize,
      compressedSize: entry.compressedSize,
      isDirectory: isDirectory(entry),
    });
  });
  if (total > ARCHIVE_RATIO_FLOOR && total > Math.max(1, compressed) * limits.maxRatio) {
    throw new ZipError(
      'TOO_LARGE',
      `the zip expands ${Math.round(total / Math.max(1, compressed))} times its size, to ${total} bytes (a zip bomb?)`,
    );
  }
  checkNamesUnpack(entries);
  return entries;
}

/**
 * Every entry must be writable where it unpacks: no name twice (the second would replace the
 * first, or fail), and no name that is a file and also a folder of another entry.
 */
function checkNamesUnpack(entries: readonly ZipEntryInfo[]): void {
  const files = new Set<string>();
  const folders = new Set<string>();
  for (const entry of entries) {
    const name = path.posix.normalize(entry.name).replace(/\/$/, '');
    if (entry.isDirectory) {
      folders.add(name);
      continue;
    }
    if (files.has(name)) throw new ZipError('DUPLICATE_ENTRY', `the zip holds ${name} more than once`);
    files.add(name);
  }
  for (const name of [...files, ...folders]) {
    for (let cut = name.indexOf('/'); cut > 0; cut = name.indexOf('/', cut + 1)) {
      if (files.has(name.slice(0, cut)))
        throw new ZipError('BAD_NAME', `${name.slice(0, cut)} is both a file and a folder in the zip`);
    }
    if (folders.has(name) && files.has(name))
      throw new ZipError('BAD_NAME', `${name} is both a file and a folder in the zip`);
  }
}

function openEntry(zip: ZipFile, entry: Entry): Promise<NodeJS.ReadableStream> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error || stream === undefined) reject(classify(error ?? new Error('no stream')));
      else resolve(stream);
    });
  });
}

/** Reads one entry into memory, refusing entries larger than `maxBytes`; undefined when absent. */
export async function readEntry(
  zipPath: string,
  name: string | ((entryName: string) => boolean),
  maxBytes: number,
): Promise<{ name: string; data: Buffer } | undefined> {
  let found: { name: string; data: Buffer } | undefined;
  const matches = typeof name === 'string' ? (entryName: string) => entryName === name : name;
  await eachEntry(zipPath, async (entry, zip) => {
    if (isDirectory(entry) || !matches(entry.fileName)) return false;
    if (entry.uncompressedSize > maxBytes)
      throw new ZipError('TOO_LARGE', `${entry.fileName} is larger than ${maxBytes} bytes`);
    const chunks: Buffer[] = [];
    for await (const chunk of await openEntry(zip, entry)) chunks.push(chunk as Buffer);
    found = { name: entry.fileName, data: Buffer.concat(chunks) };
    return true;
  });
  return found;
}

/**
 * Extracts into `destDir` (which must exist and should be empty). Checks every entry first, so a
 * bad archive writes nothing; then counts the bytes actually written, per entry against its
 * declared size and in all against the limit, and the entries against theirs, so that a central
 * directory that lies is stopped at the limits whatever it declared.
 */
export async function extractZip(
  zipPath: string,
  destDir: string,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): Promise<string[]> {
  await listEntries(zipPath, limits);
  const root = path.resolve(destDir);
  const written: string[] = [];
  let inflated = 0;
  let count = 0;
  await eachEntry(zipPath, async (entry, zip) => {
    count += 1;
    if (count > limits.maxEntries)
      throw new ZipError('TOO_MANY_ENTRIES', `the zip has more than ${limits.maxEntries} entries`);
    const target = path.resolve(root, entry.fileName);
    if (target !== root && !target.startsWith(root + path.sep))
      throw new ZipError('PATH_TRAVERSAL', `unsafe entry name: ${entry.fileName}`);
    if (isDirectory(entry)) {
      await fs.promises.mkdir(target, { recursive: true });
      return;
    }
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    let entryBytes = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        inflated += chunk.length;
        entryBytes += chunk.length;
        if (entryBytes > entry.uncompressedSize)
          done(
            new ZipError(
              'TOO_LARGE',
              `entry ${entry.fileName} expands beyond the ${entry.uncompressedSize} bytes the zip declares for it`,
            ),
          );
        else if (inflated > limits.maxTotalBytes)
          done(new ZipError('TOO_LARGE', `the zip expands to more than ${limits.maxTotalBytes} bytes`));
        else done(null, chunk);
      },
    });
    await pipeline(await openEntry(zip, entry), counter, fs.createWriteStream(target, { flags: 'wx', mode: 0o644 }));
    written.push(entry.fileName);
  });
  return written;
}
