/** Users, plans and roles. */
import { InvalidParameterError } from './errors.ts';

/** Plans decide queue priority (docs/api.md#the-queue) and the longest allowed test timeout. */
export const PLANS = ['PLATINUM', 'GOLD', 'SILVER'] as const;
export type Plan = (typeof PLANS)[number];

/** Higher runs first. */
export const PLAN_PRIORITY: Readonly<Record<Plan, number>> = { PLATINUM: 3, GOLD: 2, SILVER: 1 };

/** Longest test timeout a plan allows, in seconds. */
export const PLAN_MAX_TIMEOUT_SECONDS: Readonly<Record<Plan, number>> = { PLATINUM: 7200, GOLD: 3600, SILVER: 1800 };

export const ROLES = ['USER', 'ADMIN'] as const;
export type Role = (typeof ROLES)[number];

export const USER_STATUSES = ['ENABLED', 'DISABLED', 'INACTIVE'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/** An account. Its API key is not part of it: the store keeps only its hash and its sealed form. */
export interface User {
  readonly id: number;
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly organization: string | null;
  readonly country: string | null;
  readonly timeZone: string | null;
  /** Contact fields the established API's user record carries, edited through `POST /me`. */
  readonly address: string | null;
  readonly city: string | null;
  /** Postal code. */
  readonly code: string | null;
  /** State or region. */
  readonly state: string | null;
  readonly phone: string | null;
  readonly vatId: string | null;
  readonly status: UserStatus;
  readonly role: Role;
  readonly plan: Plan;
  readonly createTime: number;
  readonly lastLoginTime: number | null;
  readonly lastLaunchedTestTime: number | null;
}

/** The profile fields `POST /me` edits besides the names, all optional text (empty clears one). */
export const PROFILE_FIELDS = [
  'organization',
  'country',
  'timeZone',
  'address',
  'city',
  'code',
  'state',
  'phone',
  'vatId',
] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];

export function fullName(user: Pick<User, 'firstName' | 'lastName'>): string {
  return `${user.firstName} ${user.lastName}`.trim();
}

// Deliberately loose: one @, something on both sides, no whitespace. Delivery proves the rest.
const EMAIL = /^[^\s@]+@[^\s@]+$/;

export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 254) {
    throw new InvalidParameterError('email', `'${raw.slice(0, 60)}' is not an e-mail address`);
  }
  return email;
}

export const MIN_PASSWORD_LENGTH = 8;

export function checkPassword(password: string): string {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > 1024) {
    throw new InvalidParameterError('password', `A password must be ${MIN_PASSWORD_LENGTH} to 1024 characters long`);
  }
  return password;
}

/** API keys are 32 alphanumeric characters (docs/api.md#authentication). */
export const API_KEY_PATTERN = /^[A-Za-z0-9]{32}$/;

/** A user with the API key just issued (creation, reset): the only moments the key is at hand. */
export interface UserWithKey extends User {
  readonly apiKey: string;
}
