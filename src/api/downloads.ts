/** Stored files as byte answers. */
import type { Download } from '../services/files.ts';
import type { ByteAnswer } from './route.ts';

export function fileAnswer({ file, stream }: Download): ByteAnswer {
  const inline = file.mimetype.startsWith('image/') || file.mimetype.startsWith('text/');
  return { stream, contentType: file.mimetype, length: file.size, fileName: file.name, inline };
}
