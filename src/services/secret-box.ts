/**
 * Secrets that must be shown again (a user's API key, on the dashboard's reveal) are stored
 * encrypted: AES-256-GCM with a random 96-bit nonce, authenticated with the row they belong to
 * (`users.api_key:<id>`), so a ciphertext copied onto another row does not open. The key lives
 * outside the database (server/secret-keys.ts). Keys have ids: each ciphertext names the key that
 * sealed it, the first key of the ring seals, every key of the ring opens, and rotation
 * re-seals every row with the first.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { KEY_BYTES, type SecretKey, SecretKeyError } from '../domain/secret-keys.ts';

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

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

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
    return Buffer.concat([
      decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    throw new SecretKeyError(
      `The sealed secret does not open with key '${sealed.keyId}': it was altered or belongs to another record`,
    );
  }
}

/** What a user's API key is authenticated with: its row. */
export const apiKeyAssociatedData = (userId: number) => `users.api_key:${userId}`;

/** Seals users' API keys with the ring's current key (the migration that sealed the plain ones takes it). */
export function apiKeySealer(ring: KeyRing): (userId: number, apiKey: string) => Sealed {
  return (userId, apiKey) => seal(ring.current(), apiKey, apiKeyAssociatedData(userId));
}

/** The sealers the migrations that seal plain secrets (008, 010) take from their caller, who holds the ring. */
export function migrationSealers(ring: KeyRing) {
  return {
    sealApiKey: apiKeySealer(ring),
    sealRunSecrets: (testRunId: number, secrets: string) =>
      seal(ring.current(), secrets, runSecretsAssociatedData(testRunId)),
  };
}

/** What a run's secrets (domain/run-settings.ts RunSecrets) are authenticated with: the run. */
export const runSecretsAssociatedData = (testRunId: number) => `test_run_secrets:${testRunId}`;

/** A new key: a random id (so that servers never pick the same one) and 32 random bytes. */
export function generateSecretKey(): SecretKey {
  return { id: `k${randomBytes(6).toString('hex')}`, key: randomBytes(KEY_BYTES) };
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
