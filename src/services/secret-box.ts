/**
 * Secrets that must be shown again (a user's API key, on the dashboard's reveal) are stored
 * encrypted: AES-256-GCM with a random 96-bit nonce, authenticated with the row they belong to
 * (`users.api_key:<id>`), so a ciphertext copied onto another row does not open. The key lives
 * outside the database (server/secret-keys.ts). Keys have ids: each ciphertext names the key that
 * sealed it, the first key of the ring seals, every key of the ring opens, and rotation
 * re-seals every row with the first.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface SecretKey {
  readonly id: string;
  readonly key: Buffer;
}

/** Where the keys come from; read on every use, so that a rotated key file is picked up. */
export interface KeyRing {
  /** The key new ciphertexts are sealed with. */
  current(): SecretKey;
  /** A key by id, to open what it sealed; undefined when the ring no longer holds it. */
  find(id: string): SecretKey | undefined;
  /** Every key id of the ring, the current one first. */
  ids(): readonly string[];
  /** Where the keys come from, for messages (never the keys). */
  readonly origin: string;
}

export interface Sealed {
  readonly keyId: string;
  /** base64url of nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes). */
  readonly ciphertext: string;
}

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9_-]{1,40}$/;

export class SecretKeyError extends Error {}

export function seal(key: SecretKey, plaintext: string, associatedData: string): Sealed {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { keyId: key.id, ciphertext: Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url') };
}

/** The plaintext; throws SecretKeyError when the key is gone or the ciphertext was altered or moved. */
export function open(ring: KeyRing, sealed: Sealed, associatedData: string): string {
  const key = ring.find(sealed.keyId);
  if (key === undefined) {
    throw new SecretKeyError(`The secret was sealed with key '${sealed.keyId}', which ${ring.origin} no longer holds`);
  }
  const raw = Buffer.from(sealed.ciphertext, 'base64url');
  if (raw.length < NONCE_BYTES + TAG_BYTES) throw new SecretKeyError('The sealed secret is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key.key, raw.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretKeyError(`The sealed secret does not open with key '${sealed.keyId}': it was altered or belongs to another record`);
  }
}

/** What a user's API key is authenticated with: its row. */
export const apiKeyAssociatedData = (userId: number) => `users.api_key:${userId}`;

/** What a run's secrets (domain/run-settings.ts RunSecrets) are authenticated with: the run. */
export const runSecretsAssociatedData = (testRunId: number) => `test_run_secrets:${testRunId}`;

/** A new key: a random id (so that servers never pick the same one) and 32 random bytes. */
export function generateSecretKey(): SecretKey {
  return { id: `k${randomBytes(6).toString('hex')}`, key: randomBytes(KEY_BYTES) };
}

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
    if (!KEY_ID.test(id)) throw new SecretKeyError(`key ${index + 1} must be written id:base64 (an id of letters, digits, - or _, then 32 bytes in base64)`);
    const key = Buffer.from(entry.slice(separator + 1), 'base64');
    if (key.length !== KEY_BYTES || !/^[A-Za-z0-9+/]+={0,2}$/.test(entry.slice(separator + 1))) {
      throw new SecretKeyError(`key ${index + 1} ('${id}') must be ${KEY_BYTES} bytes in base64 (44 characters; devicecloud admin generate-secrets-key makes one)`);
    }
    if (keys.some((other) => other.id === id)) throw new SecretKeyError(`key id '${id}' appears twice`);
    keys.push({ id, key });
  }
  if (keys.length === 0) throw new SecretKeyError('no key given');
  return keys;
}

/** A ring over a fixed list of keys (the setting, or one reading of the key file). */
export function fixedKeyRing(keys: readonly SecretKey[], origin: string): KeyRing {
  if (keys.length === 0) throw new SecretKeyError(`${origin} holds no key`);
  return {
    current: () => keys[0]!,
    find: (id) => keys.find((key) => key.id === id),
    ids: () => keys.map((key) => key.id),
    origin,
  };
}
