/**
 * Dashboard sign-in: an e-mail and password become a session whose token lives in an HttpOnly
 * cookie. Requests that change something must also carry the session's CSRF token in a header,
 * which a page of another site cannot read or send.
 */
import { randomBytes } from 'node:crypto';
import { UnauthorizedError } from '../domain/errors.ts';
import type { User } from '../domain/users.ts';
import type { Context } from './context.ts';
import { apiKeyHash, sameSecret } from './credentials.ts';
import { verifyCredentials } from './users.ts';

export interface SignedIn {
  readonly token: string;
  readonly csrfToken: string;
  readonly expiresTime: number;
  readonly user: User;
}

export async function signIn(ctx: Context, email: string, password: string): Promise<SignedIn> {
  const user = await verifyCredentials(ctx, email, password);
  if (user === undefined) throw new UnauthorizedError('Wrong e-mail or password');
  const now = ctx.clock();
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  const expiresTime = now + ctx.limits.sessionTtlMs;
  await ctx.store.transaction(async (store) => {
    await store.webSessions.deleteExpired(now);
    await store.webSessions.insert({ userId: user.id, tokenHash: apiKeyHash(token), csrfToken, expiresTime, now });
  });
  return { token, csrfToken, expiresTime, user };
}

/** The signed-in user of a session token, with its CSRF token; undefined when unknown or expired. */
export async function sessionOf(ctx: Context, token: string): Promise<{ user: User; csrfToken: string; expiresTime: number } | undefined> {
  if (token.length > 100) return undefined;
  const session = await ctx.store.webSessions.userByTokenHash(apiKeyHash(token));
  if (session === undefined || session.expiresTime <= ctx.clock() || session.user.status !== 'ENABLED') return undefined;
  return session;
}

export function csrfMatches(expected: string, given: string | undefined): boolean {
  return given !== undefined && sameSecret(expected, given);
}

export async function signOut(ctx: Context, token: string): Promise<void> {
  await ctx.store.webSessions.delete(apiKeyHash(token));
}
