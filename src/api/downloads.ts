/** Stored files as byte answers. */
import type { Readable } from 'node:stream';
import type { Download } from '../services/files.ts';
import type { ByteAnswer } from './route.ts';

export function fileAnswer({ file, open }: Download): ByteAnswer {
  const inline = file.mimetype.startsWith('image/') || file.mimetype.startsWith('text/');
  return { open, ranged: true, contentType: file.mimetype, length: file.size, fileName: file.name, inline };
}

/** A zip written as it is sent: no Content-Length, always a download. */
export function zipAnswer({ fileName, stream }: { fileName: string; stream: Readable }): ByteAnswer {
  return { open: () => stream, ranged: false, contentType: 'application/zip', length: null, fileName, inline: false };
}
