/**
 * Dashboard sign-in: an e-mail and password become a session whose token lives in an HttpOnly
 * cookie. Requests that change something must also carry the session's CSRF token in a header,
 * which a page of another site cannot read or send.
 */
import { randomBytes } from 'node:crypto';
import { ForbiddenError, InvalidParameterError, UnauthorizedError } from '../domain/errors.ts';
import type { User } from '../domain/users.ts';
import type { Context } from './context.ts';
import { apiKeyHash, sameSecret } from './credentials.ts';
import { passwordMatches, verifyCredentials } from './users.ts';

export interface SignedIn {
  readonly token: string;
  readonly csrfToken: string;
  readonly expiresTime: number;
  readonly user: User;
}

export async function signIn(ctx: Context, email: string, password: string): Promise<SignedIn & { authTime: number }> {
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
  return { token, csrfToken, expiresTime, user, authTime: now };
}

export interface Session {
  readonly user: User;
  readonly csrfToken: string;
  readonly expiresTime: number;
  /** When the password was last entered in this session. */
  readonly authTime: number;
  /** How the store knows the session (the token itself is never kept). */
  readonly tokenHash: string;
}

/** The signed-in user of a session token, with its CSRF token; undefined when unknown or expired. */
export async function sessionOf(ctx: Context, token: string): Promise<Session | undefined> {
  if (token.length > 100) return undefined;
  const tokenHash = apiKeyHash(token);
  const session = await ctx.store.webSessions.userByTokenHash(tokenHash);
  if (session === undefined || session.expiresTime <= ctx.clock() || session.user.status !== 'ENABLED')
    return undefined;
  return { ...session, tokenHash };
}

/** Until when the session may reveal or reset the API key without entering the password again. */
export function recentUntil(ctx: Context, session: Pick<Session, 'authTime'>): number {
  return session.authTime + ctx.limits.recentSignInMs;
}

/**
 * A session shows the permanent credential (the API key) only shortly after its password was
 * entered: a session cookie left in a shared browser, or stolen, does not become the key.
 */
export function requireRecentSignIn(ctx: Context, session: Pick<Session, 'authTime'>): void {
  if (ctx.clock() > recentUntil(ctx, session)) {
    throw new ForbiddenError(
      `The API key is shown only within ${Math.round(ctx.limits.recentSignInMs / 60_000)} minutes of entering your password: confirm it (POST /auth/session/confirm) and try again`,
    );
  }
}

/** Wrong passwords a session may give when confirming before it ends. */
export const MAX_CONFIRM_FAILURES = 5;

/**
 * The password entered again in a signed-in session: the session is a recent sign-in again. A
 * session that holds a stolen cookie could guess the password here: after a few wrong ones it ends.
 */
export async function confirmPassword(ctx: Context, session: Session, password: string): Promise<Session> {
  if (!(await passwordMatches(ctx, session.user, password))) {
    if ((await ctx.store.webSessions.countConfirmFailure(session.tokenHash)) >= MAX_CONFIRM_FAILURES) {
      await ctx.store.webSessions.delete(session.tokenHash);
      throw new UnauthorizedError('The password was wrong too many times: this session has ended, sign in again');
    }
    throw new InvalidParameterError('password', 'The password is not right');
  }
  const now = ctx.clock();
  await ctx.store.webSessions.markAuthenticated(session.tokenHash, now);
  return { ...session, authTime: now };
}

export function csrfMatches(expected: string, given: string | undefined): boolean {
  return given !== undefined && sameSecret(expected, given);
}

export async function signOut(ctx: Context, token: string): Promise<void> {
  await ctx.store.webSessions.delete(apiKeyHash(token));
}
