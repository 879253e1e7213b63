/**
 * Where the key that seals API keys comes from, outside the database: the setting
 * `apiKeyEncryptionKeys` (DEVICECLOUD_API_KEY_ENCRYPTION_KEYS: every server of a cloud gets the
 * same), else a key file, by default `<data-dir>/secrets/api-key-encryption.key`, created with
 * mode 0600 (its folder 0700) by the first role that opens the store. The file is read again
 * when it changes, so `devicecloud admin rotate-secrets-key` takes effect on running servers of
 * this host without a restart.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { type SecretKey, SecretKeyError, formatSecretKey, parseSecretKeys } from '../domain/secret-keys.ts';
import { type KeyRing, fixedKeyRing, generateSecretKey } from '../services/secret-box.ts';

export const KEYS_SETTING = 'apiKeyEncryptionKeys (DEVICECLOUD_API_KEY_ENCRYPTION_KEYS)';

export function defaultKeyFile(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'secrets', 'api-key-encryption.key');
}

/** The key file in use, or undefined when the keys come from the setting. */
export function keyFileOf(
  config: Pick<Config, 'dataDir' | 'apiKeyEncryptionKeys' | 'apiKeyEncryptionKeyFile'>,
): string | undefined {
  if (config.apiKeyEncryptionKeys !== undefined) return undefined;
  return config.apiKeyEncryptionKeyFile ?? defaultKeyFile(config);
}

/** The keys, and the key file this call made, if it made one (openStore checks it fits the database). */
export function openKeyRing(config: Pick<Config, 'dataDir' | 'apiKeyEncryptionKeys' | 'apiKeyEncryptionKeyFile'>): {
  ring: KeyRing;
  madeKeyFile: string | null;
} {
  if (config.apiKeyEncryptionKeys !== undefined)
    return { ring: fixedKeyRing(config.apiKeyEncryptionKeys, `the setting ${KEYS_SETTING}`), madeKeyFile: null };
  const file = keyFileOf(config)!;
  const made = config.apiKeyEncryptionKeyFile === undefined && createKeyFileIfMissing(file);
  return { ring: fileKeyRing(file), madeKeyFile: made ? file : null };
}

/** Creates the file with one new key, unless it exists (several roles may start at once); says whether it did. */
function createKeyFileIfMissing(file: string): boolean {
  if (fs.existsSync(file)) return false;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(temporary, keyFileText([generateSecretKey()]), { mode: 0o600, flag: 'wx' });
  try {
    // A link, unlike a rename, fails when another process created the file meanwhile: theirs wins.
    fs.linkSync(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

function fileKeyRing(file: string): KeyRing {
  let cached: { stamp: string; ring: KeyRing } | undefined;
  const ring = (): KeyRing => {
    const stamp = stampOf(file);
    if (cached?.stamp !== stamp) cached = { stamp, ring: fixedKeyRing(readKeyFile(file), `the key file ${file}`) };
    return cached.ring;
  };
  ring(); // a missing or bad file stops the start, not the first sign-up
  return {
    current: () => ring().current(),
    find: (id) => ring().find(id),
    ids: () => ring().ids(),
    origin: `the key file ${file}`,
  };
}

function stampOf(file: string): string {
  try {
    const stat = fs.statSync(file);
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  } catch (error) {
    throw new SecretKeyError(`Cannot read the API key encryption key file ${file}: ${(error as Error).message}`);
  }
}

export function readKeyFile(file: string): SecretKey[] {
  let stat: fs.Stats;
  let text: string;
  try {
    stat = fs.statSync(file);
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new SecretKeyError(`Cannot read the API key encryption key file ${file}: ${(error as Error).message}`);
  }
  if (process.platform !== 'win32' && (stat.mode & 0o007) !== 0) {
    throw new SecretKeyError(
      `The API key encryption key file ${file} is open to every user of this machine: chmod 600 it`,
    );
  }
  try {
    return parseSecretKeys(text);
  } catch (error) {
    throw new SecretKeyError(`The API key encryption key file ${file} is not valid: ${(error as Error).message}`);
  }
}

/** Rewrites the key file (mode 0600, replaced in one rename) with these keys, the first current. */
export function writeKeyFile(file: string, keys: readonly SecretKey[]): void {
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(temporary, keyFileText(keys), { mode: 0o600, flag: 'wx' });
  fs.renameSync(temporary, file);
}

function keyFileText(keys: readonly SecretKey[]): string {
  return [
    '# devicecloud: the keys that encrypt API keys in the database (AES-256-GCM), the current one first.',
    '# Keep this file out of database backups, and back it up apart: without it, the dashboard cannot',
    '# show API keys again (they keep working; users can reset them). See docs/deploy.md.',
    ...keys.map(formatSecretKey),
    '',
  ].join('\n');
}
