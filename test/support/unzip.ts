/** Reads a zip answer back as a reader would: yauzl, with its checks of names and sizes on. */
import yauzl from 'yauzl';

export interface UnzippedEntry {
  readonly name: string;
  readonly bytes: Buffer;
  readonly compressed: boolean;
}

export function unzip(zip: Buffer): Promise<UnzippedEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true }, (error, file) => {
      if (error) return reject(error);
      const entries: UnzippedEntry[] = [];
      file.on('error', reject);
      file.on('end', () => resolve(entries));
      file.on('entry', (entry: yauzl.Entry) => {
        file.openReadStream(entry, (openError, stream) => {
          if (openError) return reject(openError);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('error', reject);
          stream.on('end', () => {
            entries.push({
              name: entry.fileName,
              bytes: Buffer.concat(chunks),
              compressed: entry.compressionMethod === 8,
            });
            file.readEntry();
          });
        });
      });
      file.readEntry();
    });
  });
}
