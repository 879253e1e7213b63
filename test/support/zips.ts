/** Zips for tests, including hostile ones a zip library would refuse to write. */
import { zip } from '../../examples/lib/zip-writer.ts';

export { zip };

/** A zip whose entry name climbs out of the extraction folder (`../`). */
export async function traversalZip(): Promise<Buffer> {
  const bytes = await zip([['run-tests.sh', 'echo hi\n'], ['xx/evil.sh', 'echo pwned\n']]);
  // Same length, so offsets stay valid: rewrite the name in the local header and the directory.
  return Buffer.from(bytes.toString('latin1').replaceAll('xx/evil.sh', '../evil.s'.padEnd(10, 'h')), 'latin1');
}

/** An entry that inflates a thousand times its compressed size. */
export function bombZip(megabytes = 20): Promise<Buffer> {
  return zip([['run-tests.sh', 'echo hi\n'], ['zeros.bin', Buffer.alloc(megabytes * 1024 * 1024)]]);
}
