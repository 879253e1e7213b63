/** Zips for tests, including hostile ones a zip library would refuse to write. */
import zlib from 'node:zlib';
import { zip } from '../../examples/lib/zip-writer.ts';

export { zip };

/** A zip whose entry name climbs out of the extraction folder (`../`). */
export async function traversalZip(): Promise<Buffer> {
  const bytes = await zip([
    ['run-tests.sh', 'echo hi\n'],
    ['xx/evil.sh', 'echo pwned\n'],
  ]);
  // Same length, so offsets stay valid: rewrite the name in the local header and the directory.
  return Buffer.from(bytes.toString('latin1').replaceAll('xx/evil.sh', '../evil.s'.padEnd(10, 'h')), 'latin1');
}

/** An entry that inflates a thousand times its compressed size. */
export function bombZip(megabytes = 20): Promise<Buffer> {
  return zip([
    ['run-tests.sh', 'echo hi\n'],
    ['zeros.bin', Buffer.alloc(megabytes * 1024 * 1024)],
  ]);
}

/** A test package with run-tests.sh twice: it cannot be unpacked (the second would replace the first, or fail). */
export function duplicateEntryZip(): Promise<Buffer> {
  return zip([
    ['run-tests.sh', 'echo first\n', 0o100755],
    ['run-tests.sh', 'echo second\n', 0o100755],
  ]);
}

/**
 * run-tests.sh and `count` entries of 1 MiB of zeros each: no single entry is a bomb, together
 * they are (~1.1 MB for 1,000, expanding to 1 GiB). Written by hand, deflating the zeros once.
 */
export function manySmallBombsZip(count = 1000): Buffer {
  const entries = [
    { name: 'run-tests.sh', data: Buffer.from('echo hi\n'), method: 0, crc: zlib.crc32('echo hi\n'), size: 8 },
    ...Array.from({ length: count }, (_, index) => ({
      name: `data/zeros-${index}.bin`,
      data: DEFLATED_MIB,
      method: 8,
      crc: ZEROS_CRC,
      size: MIB,
    })),
  ];
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(entry.method, 8);
    local.writeUInt32LE(entry.crc, 14);
    local.writeUInt32LE(entry.data.length, 18);
    local.writeUInt32LE(entry.size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(entry.method, 10);
    central.writeUInt32LE(entry.crc, 16);
    central.writeUInt32LE(entry.data.length, 20);
    central.writeUInt32LE(entry.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.data);
    centrals.push(central, name);
    offset += local.length + name.length + entry.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const MIB = 1024 * 1024;
const DEFLATED_MIB = zlib.deflateRawSync(Buffer.alloc(MIB), { level: 9 });
const ZEROS_CRC = zlib.crc32(Buffer.alloc(MIB));

/**
 * A zip whose central directory lies: `zeros.bin` declares `declared` bytes but inflates to
 * `megabytes` MiB. Every check made from the directory passes; only counting what is written stops it.
 */
export async function lyingZip(megabytes = 8, declared = 1000): Promise<Buffer> {
  const bytes = await zip([
    ['run-tests.sh', 'echo hi\n', 0o100755],
    ['zeros.bin', Buffer.alloc(megabytes * 1024 * 1024)],
  ]);
  for (let at = bytes.indexOf(CENTRAL_HEADER); at !== -1; at = bytes.indexOf(CENTRAL_HEADER, at + 4)) {
    const nameLength = bytes.readUInt16LE(at + 28);
    if (bytes.toString('latin1', at + 46, at + 46 + nameLength) === 'zeros.bin') bytes.writeUInt32LE(declared, at + 24);
  }
  return bytes;
}

const CENTRAL_HEADER = Buffer.from([0x50, 0x4b, 0x01, 0x02]);
