/**
 * Zip limits that hold (issue 15): a package that cannot be unpacked, or that expands beyond the
 * limits in total (not only entry by entry), is refused from its central directory; unpacking
 * counts what it writes, so a directory that lies gets no further.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ZipError, extractZip, listEntries } from '../../src/files/zip.ts';
import { duplicateEntryZip, lyingZip, manySmallBombsZip, zip } from '../support/zips.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-zip-limits-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function write(name: string, bytes: Buffer | Promise<Buffer>): Promise<string> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, await bytes);
  return file;
}

async function problemOf(work: Promise<unknown>): Promise<{ problem: string; message: string }> {
  const error = await work.then(
    () => {
      throw new Error('accepted');
    },
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ZipError);
  return { problem: (error as ZipError).problem, message: (error as ZipError).message };
}

/** Bytes under `folder`, counted on disk. */
function bytesUnder(folder: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}

describe('zip limits', () => {
  it('refuses a package that names run-tests.sh twice, or a name as both a file and a folder', async () => {
    expect(await problemOf(listEntries(await write('duplicate.zip', duplicateEntryZip())))).toEqual({
      problem: 'DUPLICATE_ENTRY',
      message: 'the zip holds run-tests.sh more than once',
    });
    const clash = await write(
      'clash.zip',
      zip([
        ['run-tests.sh', 'x'],
        ['lib', 'a file'],
        ['lib/helper.sh', 'x'],
      ]),
    );
    expect(await problemOf(listEntries(clash))).toMatchObject({
      problem: 'BAD_NAME',
      message: expect.stringContaining('lib is both a file and a folder'),
    });
    const long = await write(
      'long.zip',
      zip([
        ['run-tests.sh', 'x'],
        [`${'a'.repeat(300)}.txt`, 'x'],
      ]),
    );
    expect(await problemOf(listEntries(long))).toMatchObject({ problem: 'BAD_NAME' });
  });

  it('refuses 1,000 entries of 1 MiB of zeros (1.1 MB that expand to 1 GiB), though no single entry is a bomb', async () => {
    const file = await write('small-bombs.zip', manySmallBombsZip(1000));
    expect(fs.statSync(file).size).toBeLessThan(1.5 * 1024 * 1024);
    expect(await problemOf(listEntries(file))).toMatchObject({
      problem: 'TOO_LARGE',
      message: expect.stringMatching(/expands \d+ times its size, to 1048576008 bytes/),
    });
    // Within the ratio, the total still counts: a lower limit refuses what expands beyond it.
    const modest = await write('modest.zip', manySmallBombsZip(3));
    expect(
      await problemOf(listEntries(modest, { maxEntries: 100, maxTotalBytes: 2 * 1024 * 1024, maxRatio: 200 })),
    ).toMatchObject({ problem: 'TOO_LARGE' });
    expect(
      await problemOf(listEntries(modest, { maxEntries: 3, maxTotalBytes: 1024 ** 3, maxRatio: 200 })),
    ).toMatchObject({ problem: 'TOO_MANY_ENTRIES' });
    expect(await listEntries(modest)).toHaveLength(4);
  });

  it('stops unpacking a zip whose central directory lies about sizes, having written no more than it declared', async () => {
    const file = await write('lying.zip', lyingZip(8, 1000));
    // Everything read from the directory looks harmless.
    expect((await listEntries(file)).map((entry) => [entry.name, entry.size])).toEqual([
      ['run-tests.sh', 8],
      ['zeros.bin', 1000],
    ]);
    const dest = fs.mkdtempSync(path.join(dir, 'lying-'));
    expect(await problemOf(extractZip(file, dest))).toMatchObject({
      message: expect.stringMatching(/too many bytes|expands beyond the 1000 bytes/),
    });
    expect(bytesUnder(dest)).toBeLessThanOrEqual(1008);
  });

  it('unpacks an honest package', async () => {
    const file = await write(
      'honest.zip',
      zip([
        ['run-tests.sh', 'echo ok\n'],
        ['lib/a.sh', 'a'],
        ['lib/b.sh', 'b'],
      ]),
    );
    const dest = fs.mkdtempSync(path.join(dir, 'honest-'));
    expect((await extractZip(file, dest)).sort()).toEqual(['lib/a.sh', 'lib/b.sh', 'run-tests.sh']);
  });
});
