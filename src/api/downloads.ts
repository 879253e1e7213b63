/** Stored files as byte answers. */
import type { Readable } from 'node:stream';
import type { Download } from '../services/files.ts';
import type { ByteAnswer } from './route.ts';

export function fileAnswer({ file, open }: Download): ByteAnswer {
  // Videos too, so that a <video> element plays them in place (docs/api.md#videos).
  const inline = /^(image|text|video)\//.test(file.mimetype);
  return { open, ranged: true, contentType: file.mimetype, length: file.size, fileName: file.name, inline };
}

/** A zip written as it is sent: no Content-Length, always a download. */
export function zipAnswer({ fileName, stream }: { fileName: string; stream: Readable }): ByteAnswer {
  return { open: () => stream, ranged: false, contentType: 'application/zip', length: null, fileName, inline: false };
}
