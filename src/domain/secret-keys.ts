/**
 * The keys that encrypt API keys at rest (services/secret-box.ts), in their text form: `id:base64`,
 * as the setting and the key file hold them. Pure, so that reading the settings (config.ts) checks
 * them without loading the encryption.
 */

export interface SecretKey {
  readonly id: string;
  readonly key: Buffer;
}

export const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9_-]{1,40}$/;

export class SecretKeyError extends Error {}

/** `id:base64` — the form of one key in the key file and in the setting. */
export function formatSecretKey(key: SecretKey): string {
  return `${key.id}:${key.key.toString('base64')}`;
}

/**
 * Keys separated by commas, spaces or new lines (lines starting with # are comments), the current
 * one first. Messages never repeat a key.
 */
export function parseSecretKeys(text: string): SecretKey[] {
  const keys: SecretKey[] = [];
  const entries = text
    .split('\n')
    .filter((line) => !line.trim().startsWith('#'))
    .join('\n')
    .split(/[\s,]+/)
    .filter((entry) => entry !== '');
  for (const [index, entry] of entries.entries()) {
    const separator = entry.indexOf(':');
    const id = separator === -1 ? '' : entry.slice(0, separator);
    if (!KEY_ID.test(id))
      throw new SecretKeyError(
        `key ${index + 1} must be written id:base64 (an id of letters, digits, - or _, then 32 bytes in base64)`,
      );
    const key = Buffer.from(entry.slice(separator + 1), 'base64');
    if (key.length !== KEY_BYTES || !/^[A-Za-z0-9+/]+={0,2}$/.test(entry.slice(separator + 1))) {
      throw new SecretKeyError(
        `key ${index + 1} ('${id}') must be ${KEY_BYTES} bytes in base64 (44 characters; devicecloud admin generate-secrets-key makes one)`,
      );
    }
    if (keys.some((other) => other.id === id)) throw new SecretKeyError(`key id '${id}' appears twice`);
    keys.push({ id, key });
  }
  if (keys.length === 0) throw new SecretKeyError('no key given');
  return keys;
}
