/** JSON is the representation itself: symbol-keyed type tags are invisible to JSON.stringify. */
import { KIND, type Rep } from '../present/representation.ts';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function encodeJson(value: Rep): string {
  // A bare list (repList) is answered as a plain JSON array, not wrapped.
  if (value[KIND] === PLAIN_ARRAY) return JSON.stringify(value.items);
  return JSON.stringify(value);
}

/** Kind used by presenters for answers that are plain arrays in JSON (API.md: performance). */
export const PLAIN_ARRAY = 'list';
