/**
 * Secrets: API keys (generated, stored with a SHA-256 index for lookup, compared in constant
 * time) and passwords (scrypt with a per-user salt).
 */
import { hash, randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: object,
) => Promise<Buffer>;

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 32 alphanumeric characters, uniformly drawn (docs/api.md#authentication). */
export function generateApiKey(): string {
  let key = '';
  for (let i = 0; i < 32; i++) key += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return key;
}

/** The lookup index of a key: finding a user by it reveals nothing about near-miss keys. */
export function apiKeyHash(key: string): string {
  // One call: a third of createHash's cost, on every request with a key.
  return hash('sha256', key, 'hex');
}

export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** scrypt's cost parameters, written into every hash so that verifying needs nothing else. */
export interface PasswordCost {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

// N=2^15 costs ~50 ms here: slow for guessing, fine for a sign-in.
export const PASSWORD_COST: PasswordCost = { N: 32768, r: 8, p: 1 };
const MAX_MEMORY = 64 * 1024 * 1024;
const KEY_LENGTH = 32;

/** `cost` is lower only in tests (a setting of their context); servers hash at PASSWORD_COST. */
export async function hashPassword(password: string, cost: PasswordCost = PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, KEY_LENGTH, { ...cost, maxmem: MAX_MEMORY });
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/**
 * A valid hash of no one's password at `cost`, checked when a sign-in names no user: it takes as
 * long as checking a real user's password.
 */
export function noOnesPasswordHash(cost: PasswordCost = PASSWORD_COST): string {
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${'A'.repeat(22)}==$${'A'.repeat(43)}=`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: MAX_MEMORY,
  });
  return timingSafeEqual(actual, expected);
}
