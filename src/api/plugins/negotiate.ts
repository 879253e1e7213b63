/**
 * The API's format rule (docs/api.md#formats): JSON when Accept lists application/json with q > 0, unless an
 * XML type is listed with a higher q; XML otherwise (no Accept, `*∕*`, XML types, anything else).
 * Never 406. This is the service's own rule rather than general negotiation, hence its own parser.
 */
import { JSON_CONTENT_TYPE, type Stringify, encodeJson } from '../encode/json.ts';
import { XML_CONTENT_TYPE, encodeXml } from '../encode/xml.ts';
import type { Rep } from '../present/representation.ts';

const cache = new Map<string, boolean>();
const CACHE_LIMIT = 256;

export function prefersJson(accept: string | undefined): boolean {
  if (accept === undefined || accept === '') return false;
  const cached = cache.get(accept);
  if (cached !== undefined) return cached;
  const answer = decide(accept);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(accept, answer);
  return answer;
}

function decide(accept: string): boolean {
  let json = 0;
  let xml = 0;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';');
    const mediaType = type.trim().toLowerCase();
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=');
      if (name?.trim().toLowerCase() === 'q') {
        const parsed = Number(value?.trim());
        q = Number.isFinite(parsed) ? Math.min(Math.max(parsed, 0), 1) : 0;
      }
    }
    if (mediaType === 'application/json') json = Math.max(json, q);
    else if (mediaType === 'application/xml' || mediaType === 'text/xml') xml = Math.max(xml, q);
  }
  return json > 0 && xml <= json;
}

/** Encodes a representation in the negotiated format; JSON with `stringify` when given (encode/json.ts). */
export function encodeFor(
  accept: string | undefined,
  body: Rep,
  stringify?: Stringify,
): { contentType: string; payload: string } {
  return prefersJson(accept)
    ? { contentType: JSON_CONTENT_TYPE, payload: encodeJson(body, stringify) }
    : { contentType: XML_CONTENT_TYPE, payload: encodeXml(body) };
}
