/** Deterministic zips (fixed timestamps), so the committed samples can be checked against the generator. */
import yazl from 'yazl';

export type ZipEntry = readonly [name: string, content: Buffer | string, mode?: number];

const EPOCH = new Date(Date.UTC(2026, 0, 1));

export function zip(entries: readonly ZipEntry[]): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  for (const [name, content, mode] of entries) {
    archive.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name, {
      mtime: EPOCH,
      mode: mode ?? 0o100644,
    });
  }
  archive.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    archive.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    archive.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    archive.outputStream.on('error', reject);
  });
}
