/**
 * HTTP Range requests on stored files (RFC 9110 §14): one range, which is what players (a video's
 * seek bar) and resuming downloaders send. Several ranges in one request are rare and need a
 * multipart answer: such a request gets the whole file, which the RFC allows.
 */

/** Inclusive, as HTTP's Range: bytes start-end. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export type RangeAsked =
  | { readonly kind: 'whole' }
  | { readonly kind: 'part'; readonly range: ByteRange }
  | { readonly kind: 'unsatisfiable' };

const WHOLE: RangeAsked = { kind: 'whole' };

export function rangeAsked(header: string | undefined, length: number): RangeAsked {
  if (header === undefined) return WHOLE;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // A unit or syntax we do not know, or several ranges: the whole file (RFC 9110 §14.2).
  if (match === null || (match[1] === '' && match[2] === '')) return WHOLE;
  const [first, last] = [match[1]!, match[2]!];
  if (first === '') {
    // bytes=-N: the last N bytes.
    const suffix = Number(last);
    if (suffix === 0 || length === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', range: { start: Math.max(0, length - suffix), end: length - 1 } };
  }
  const start = Number(first);
  const end = last === '' ? length - 1 : Math.min(Number(last), length - 1);
  if (!Number.isSafeInteger(start) || start >= length) return { kind: 'unsatisfiable' };
  if (end < start) return WHOLE;
  return { kind: 'part', range: { start, end } };
}
