/**
 * JSON is the representation itself: symbol-keyed type tags are invisible to JSON.stringify.
 *
 * JSON can carry every character, controls included (as `\u001b`), so text is kept exactly. A
 * lone surrogate is not a character: JSON.stringify writes it as an escape such as `\ud800`,
 * which strict decoders refuse (Rust's serde_json, for one), so it becomes U+FFFD, as it does
 * in XML (docs/api.md#text-that-xml-cannot-carry).
 */
import { KIND, type Rep } from '../present/representation.ts';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function encodeJson(value: Rep): string {
  // A bare list (repList) is answered as a plain JSON array, not wrapped.
  const json = value[KIND] === PLAIN_ARRAY ? JSON.stringify(value.items) : JSON.stringify(value);
  return json.includes('\\ud') ? json.replace(LONE_SURROGATE_ESCAPE, '$1\ufffd') : json;
}

// JSON.stringify escapes lone surrogates only (a pair is written as it is), in lower case; an
// escape preceded by an odd number of backslashes is text (`\\ud800` is the six characters).
const LONE_SURROGATE_ESCAPE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/** Kind used by presenters for answers that are plain arrays in JSON (docs/api.md#device-runs-and-device-sessions). */
export const PLAIN_ARRAY = 'list';
