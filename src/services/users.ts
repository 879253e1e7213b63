/** Accounts: creating users, authenticating API keys, resetting keys, profiles and plans. */
import { ConflictError, InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import { checkText } from '../domain/text.ts';
import {
  type Plan,
  type ProfileField,
  type Role,
  type User,
  type UserWithKey,
  API_KEY_PATTERN,
  PROFILE_FIELDS,
  checkPassword,
  normalizeEmail,
} from '../domain/users.ts';
import type { Store } from '../store/store.ts';
import type { ProfileChanges } from '../store/users.ts';
import type { Context } from './context.ts';
import { apiKeyHash, generateApiKey, hashPassword, noOnesPasswordHash, verifyPassword } from './credentials.ts';
import { startGuess } from './password-guesses.ts';
import { apiKeyAssociatedData, open, seal } from './secret-box.ts';

export interface NewUserInput {
  readonly email: string;
  readonly password: string;
  readonly plan: Plan;
  readonly role?: Role;
  readonly firstName?: string;
  readonly lastName?: string;
  /** Normally generated; the local cloud keeps its demo key stable across restarts this way. */
  readonly apiKey?: string;
}

/** Creates the account; the answer carries its API key, which is not kept anywhere in the clear. */
export async function createUser(ctx: Context, input: NewUserInput): Promise<UserWithKey> {
  const email = normalizeEmail(input.email);
  const passwordHash = await hashPassword(checkPassword(input.password), ctx.testOnlyPasswordCost);
  if (input.apiKey !== undefined && !API_KEY_PATTERN.test(input.apiKey)) {
    throw new InvalidParameterError('apiKey', 'An API key must be 32 letters and digits');
  }
  const apiKey = input.apiKey ?? generateApiKey();
  return ctx.store.transaction(async (store) => {
    if (await store.users.findByEmail(email)) throw new ConflictError(`A user with e-mail ${email} already exists`);
    const user = await store.users.insert({
      email,
      passwordHash,
      firstName: checkText('firstName', input.firstName ?? '', { maxLength: 255 }),
      lastName: checkText('lastName', input.lastName ?? '', { maxLength: 255 }),
      plan: input.plan,
      role: input.role ?? 'USER',
      apiKeyHash: apiKeyHash(apiKey),
      createTime: ctx.clock(),
    });
    // Sealed for the row it belongs to, whose id the insert just gave.
    await storeApiKey(ctx, store, user.id, apiKey);
    return { ...user, apiKey };
  });
}

async function storeApiKey(ctx: Context, store: Store, userId: number, apiKey: string): Promise<void> {
  await store.users.setApiKey(
    userId,
    apiKeyHash(apiKey),
    seal(ctx.keyRing.current(), apiKey, apiKeyAssociatedData(userId)),
  );
}

/**
 * The user's API key, unsealed, for the few places that show it again: the dashboard's reveal
 * (after a recent sign-in) and the local cloud's demo banner. Never for another user.
 */
export async function revealApiKey(ctx: Context, user: User): Promise<string> {
  const sealed = await ctx.store.users.sealedApiKeyOf(user.id);
  if (sealed === undefined) throw new NotFoundError('API key of user', user.id);
  return open(ctx.keyRing, sealed, apiKeyAssociatedData(user.id));
}

/** The user holding this API key, if any and if enabled. */
export async function authenticateApiKey(ctx: Context, key: string): Promise<User | undefined> {
  if (!API_KEY_PATTERN.test(key)) return undefined;
  // The lookup is by the key's SHA-256: equality on a hash reveals nothing about near misses.
  const user = await ctx.store.users.findByApiKeyHash(apiKeyHash(key));
  if (user === undefined || user.status !== 'ENABLED') return undefined;
  return user;
}

/**
 * The enabled user with this e-mail and password, or undefined: the same answer, in about the
 * same time, whether the e-mail is unknown or the password wrong. A match is a sign-in (dashboard
 * or OAuth password grant): it becomes the user's `lastLoginTime`.
 */
export async function verifyCredentials(ctx: Context, rawEmail: string, password: string): Promise<User | undefined> {
  // Counted per account before anything is checked (services/password-guesses.ts).
  const guess = await startGuess(ctx, rawEmail);
  let email: string | undefined;
  try {
    email = normalizeEmail(rawEmail);
  } catch {
    email = undefined;
  }
  const user = email === undefined ? undefined : await ctx.store.users.findByEmail(email);
  const hash = user === undefined ? undefined : await ctx.store.users.passwordHashOf(user.id);
  const matches = await verifyPassword(password, hash ?? noOnesPasswordHash(ctx.testOnlyPasswordCost));
  if (user === undefined || hash === undefined || !matches || user.status !== 'ENABLED') return undefined;
  await guess.forget();
  const now = ctx.clock();
  await ctx.store.users.touchLogin(user.id, now);
  return { ...user, lastLoginTime: now };
}

/**
 * Issues a new key; the old one, every OAuth token of the user and every dashboard session but
 * `keepSession` (the token hash of the session that asked, if one did) stop working with this
 * commit.
 */
export async function resetApiKey(ctx: Context, user: User, keepSession?: string): Promise<UserWithKey> {
  const apiKey = generateApiKey();
  await ctx.store.transaction(async (store) => {
    await storeApiKey(ctx, store, user.id, apiKey);
    await store.oauthTokens.revokeAllOf(user.id);
    await store.webSessions.revokeAllOf(user.id, keepSession);
  });
  return { ...(await requireUser(ctx, user.id)), apiKey };
}

/**
 * A new password, given the current one; every OAuth token and dashboard session of the user stops
 * working, but `keepSession` (the token hash of the session that changed it, if one did), in which
 * the password was just entered.
 */
export async function changePassword(
  ctx: Context,
  user: User,
  currentPassword: string,
  newPassword: string,
  keepSession?: string,
): Promise<void> {
  // A wrong current password is a password guess like a failed sign-in: a stolen cookie or token
  // must not get more of them here than at the sign-in page.
  const guess = await startGuess(ctx, user.email);
  if (!(await passwordMatches(ctx, user, currentPassword))) {
    throw new InvalidParameterError('currentPassword', 'The current password is not right');
  }
  await guess.forget();
  const passwordHash = await hashPassword(checkPassword(newPassword), ctx.testOnlyPasswordCost);
  await ctx.store.transaction(async (store) => {
    await store.users.setPasswordHash(user.id, passwordHash);
    await store.oauthTokens.revokeAllOf(user.id);
    await store.webSessions.revokeAllOf(user.id, keepSession);
    if (keepSession !== undefined) await store.webSessions.markAuthenticated(keepSession, ctx.clock());
  });
}

/** Whether this is the user's password (for a session confirming it); not a sign-in. */
export async function passwordMatches(ctx: Context, user: User, password: string): Promise<boolean> {
  const stored = await ctx.store.users.passwordHashOf(user.id);
  return stored !== undefined && (await verifyPassword(password, stored));
}

export type ProfileInput = { firstName?: string; lastName?: string } & { [field in ProfileField]?: string };

export async function updateProfile(ctx: Context, user: User, input: ProfileInput): Promise<User> {
  const optional = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const text = checkText(name, value, { maxLength: 255 });
    return text === '' ? null : text;
  };
  const changes: ProfileChanges = {
    firstName: input.firstName === undefined ? undefined : checkText('firstName', input.firstName, { maxLength: 255 }),
    lastName: input.lastName === undefined ? undefined : checkText('lastName', input.lastName, { maxLength: 255 }),
    ...Object.fromEntries(PROFILE_FIELDS.map((field) => [field, optional(field, input[field])])),
  };
  await ctx.store.users.updateProfile(user.id, changes);
  return requireUser(ctx, user.id);
}

/** Finds a user by id or e-mail, for operators. */
export async function findUser(ctx: Context, idOrEmail: string): Promise<User> {
  const user = /^\d+$/.test(idOrEmail)
    ? await ctx.store.users.findById(Number(idOrEmail))
    : await ctx.store.users.findByEmail(idOrEmail.trim().toLowerCase());
  if (user === undefined) throw new NotFoundError('User', idOrEmail);
  return user;
}

export async function setPlan(ctx: Context, user: User, plan: Plan): Promise<User> {
  await ctx.store.users.setPlan(user.id, plan);
  return requireUser(ctx, user.id);
}

export async function setRole(ctx: Context, user: User, role: Role): Promise<User> {
  await ctx.store.users.setRole(user.id, role);
  return requireUser(ctx, user.id);
}

async function requireUser(ctx: Context, id: number): Promise<User> {
  const user = await ctx.store.users.findById(id);
  if (user === undefined) throw new NotFoundError('User', id);
  return user;
}
