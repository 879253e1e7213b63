/**
 * Writing zips as a stream (docs/api.md#result-zips): entries are opened one at a time, when the
 * writer reaches them, and flow through it with back-pressure, so memory stays flat whatever the
 * entries weigh and however slowly the reader takes them. yazl writes the local headers with data
 * descriptors (sizes after the data) and switches to ZIP64 past 4 GiB or 65,535 entries by itself.
 * Entry names must already be safe and unique (domain/result-zips.ts); yazl refuses absolute and
 * `..` names, which would make the zip fail half-way, so they are checked here first as well.
 */
import { PassThrough, type Readable } from 'node:stream';
import yazl from 'yazl';

export interface ZipSource {
  /** A relative path with `/` separators, unique in the zip. */
  readonly name: string;
  /** The entry's time, so that the same files always give the same bytes. */
  readonly mtime: Date;
  readonly compress: boolean;
  /** Opens the entry's bytes; called once, when the writer reaches the entry. */
  readonly open: () => Readable;
}

const MODE = 0o100644;

/**
 * The zip of `sources`, in their order. The stream fails (and stops reading) when an entry cannot
 * be read, and stops reading the entries when it is destroyed (a reader that went away).
 */
export function zipStream(sources: readonly ZipSource[]): Readable {
  for (const source of sources) checkName(source.name);
  const zip = new yazl.ZipFile();
  const output = new PassThrough();
  let current: Readable | undefined;
  let failed = false;
  const fail = (error: Error) => {
    if (failed) return;
    failed = true;
    current?.destroy();
    output.destroy(error);
  };
  zip.on('error', fail);
  output.on('close', () => current?.destroy());
  for (const source of sources) {
    zip.addReadStreamLazy(source.name, { mtime: source.mtime, mode: MODE, compress: source.compress }, (callback) => {
      if (failed || output.destroyed) return;
      try {
        current = source.open();
      } catch (error) {
        fail(error as Error);
        return;
      }
      // yazl pipes the entry without listening for its errors: unheard, one would crash the
      // process and leave the zip waiting for bytes that never come.
      current.once('error', fail);
      callback(null, current);
    });
  }
  zip.end();
  zip.outputStream.on('error', fail);
  zip.outputStream.pipe(output);
  return output;
}

function checkName(name: string): void {
  if (
    name === '' ||
    name.startsWith('/') ||
    name.endsWith('/') ||
    name.includes('\\') ||
    name.includes('\u0000') ||
    name.split('/').some((part) => part === '' || part === '.' || part === '..')
  ) {
    throw new Error(`unsafe zip entry name ${JSON.stringify(name.slice(0, 80))}`);
  }
}
