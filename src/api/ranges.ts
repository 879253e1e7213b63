/**
 * `Range: bytes=…` on stored files (RFC 9110 §14), which players need to seek in a video while it
 * downloads (docs/api.md#videos). One range is served (206); a header this does not understand,
 * or several ranges, is ignored and the whole file sent (200), as the RFC allows; a range that
 * starts past the end is refused (416).
 */
import type { Readable } from 'node:stream';
import { RangeNotSatisfiableError } from '../domain/errors.ts';
import type { ByteAnswer } from './route.ts';

export interface ByteRange {
  readonly start: number;
  /** Inclusive. */
  readonly end: number;
}

export function byteRange(header: string | undefined, length: number): ByteRange | null {
  if (header === undefined) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (match === null) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    // The last N bytes.
    const suffix = Number(last);
    if (suffix === 0) throw new RangeNotSatisfiableError(length);
    return { start: Math.max(0, length - suffix), end: length - 1 };
  }
  const start = Number(first);
  const end = last === '' ? length - 1 : Math.min(Number(last), length - 1);
  if (last !== '' && Number(last) < start) return null;
  if (start >= length) throw new RangeNotSatisfiableError(length);
  return { start, end };
}

/** What to send for a byte answer: the whole of it, or the range the request asks for. */
export function rangedAnswer(
  answer: ByteAnswer,
  status: number,
  header: string | undefined,
): { status: number; stream: Readable; headers: Record<string, string | number> } {
  if (answer.range === undefined || answer.length === null)
    return {
      status,
      stream: answer.stream,
      headers: answer.length === null ? {} : { 'content-length': answer.length },
    };
  let range: ByteRange | null;
  try {
    range = byteRange(header, answer.length);
  } catch (error) {
    answer.stream.destroy();
    throw error;
  }
  if (range === null)
    return { status, stream: answer.stream, headers: { 'accept-ranges': 'bytes', 'content-length': answer.length } };
  answer.stream.destroy();
  return {
    status: 206,
    stream: answer.range(range.start, range.end),
    headers: {
      'accept-ranges': 'bytes',
      'content-range': `bytes ${range.start}-${range.end}/${answer.length}`,
      'content-length': range.end - range.start + 1,
    },
  };
}
