/**
 * OAuth 2.0 (docs/api.md#oauth-20): the password and refresh-token grants of the token endpoint, and bearer
 * access tokens. A refresh token works once: refreshing replaces the whole pair. A password
 * change or an API key reset revokes every pair of the user.
 */
import { randomBytes } from 'node:crypto';
import { OAuthError } from '../domain/errors.ts';
import type { User } from '../domain/users.ts';
import type { Store } from '../store/store.ts';
import type { Context } from './context.ts';
import { apiKeyHash } from './credentials.ts';
import { verifyCredentials } from './users.ts';

export const OAUTH_CLIENT_ID = 'testdroid-cloud-api';

export interface TokenAnswer {
  readonly access_token: string;
  readonly token_type: 'bearer';
  readonly refresh_token: string;
  readonly expires_in: number;
  readonly scope: string;
}

/** The token endpoint's parameters as they came, from the query or the form. */
export type TokenRequest = Readonly<Record<string, unknown>>;

export async function grantToken(ctx: Context, request: TokenRequest): Promise<TokenAnswer> {
  const param = (name: string): string | undefined => {
    const value = request[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string')
      throw new OAuthError('invalid_request', `Parameter '${name}' must be given once, as text`);
    return value;
  };
  const clientId = param('client_id');
  if (clientId === undefined)
    throw new OAuthError('invalid_request', `Parameter 'client_id' is required (${OAUTH_CLIENT_ID})`);
  if (clientId !== OAUTH_CLIENT_ID)
    throw new OAuthError('invalid_client', `Unknown client_id '${clientId.slice(0, 100)}'; use ${OAUTH_CLIENT_ID}`);
  const grantType = param('grant_type');
  switch (grantType) {
    case 'password': {
      const username = param('username');
      const password = param('password');
      if (username === undefined || password === undefined)
        throw new OAuthError('invalid_request', "The password grant needs 'username' (your e-mail) and 'password'");
      return passwordGrant(ctx, username, password);
    }
    case 'refresh_token': {
      const refreshToken = param('refresh_token');
      if (refreshToken === undefined)
        throw new OAuthError('invalid_request', "The refresh_token grant needs 'refresh_token'");
      return refreshGrant(ctx, refreshToken);
    }
    case undefined:
      throw new OAuthError('invalid_request', "Parameter 'grant_type' is required (password or refresh_token)");
    default:
      throw new OAuthError(
        'unsupported_grant_type',
        `grant_type '${grantType.slice(0, 100)}' is not supported; use password or refresh_token`,
      );
  }
}

async function passwordGrant(ctx: Context, username: string, password: string): Promise<TokenAnswer> {
  const user = await verifyCredentials(ctx, username, password);
  if (user === undefined) throw new OAuthError('invalid_grant', 'Bad credentials');
  return ctx.store.transaction((store) => issuePair(ctx, store, user.id));
}

async function refreshGrant(ctx: Context, refreshToken: string): Promise<TokenAnswer> {
  const now = ctx.clock();
  return ctx.store.transaction(async (store) => {
    const pair = await store.oauthTokens.takeByRefreshHash(apiKeyHash(refreshToken));
    if (pair === undefined)
      throw new OAuthError('invalid_grant', 'Invalid refresh token (it was used, revoked or never issued)');
    if (pair.refreshExpiresTime <= now)
      throw new OAuthError('invalid_grant', 'The refresh token has expired; sign in again with the password grant');
    const user = await store.users.findById(pair.userId);
    if (user === undefined || user.status !== 'ENABLED')
      throw new OAuthError('invalid_grant', 'The account is not enabled');
    return issuePair(ctx, store, user.id);
  });
}

async function issuePair(ctx: Context, store: Store, userId: number): Promise<TokenAnswer> {
  const now = ctx.clock();
  const accessToken = randomBytes(32).toString('base64url');
  const refreshToken = randomBytes(32).toString('base64url');
  await store.oauthTokens.deleteExpired(now);
  await store.oauthTokens.insert({
    userId,
    accessHash: apiKeyHash(accessToken),
    refreshHash: apiKeyHash(refreshToken),
    accessExpiresTime: now + ctx.limits.oauthAccessTtlMs,
    refreshExpiresTime: now + ctx.limits.oauthRefreshTtlMs,
    now,
  });
  return {
    access_token: accessToken,
    token_type: 'bearer',
    refresh_token: refreshToken,
    expires_in: Math.floor(ctx.limits.oauthAccessTtlMs / 1000),
    scope: 'read write',
  };
}

/** The user an access token stands for; throws invalid_token when it is unknown, expired or revoked. */
export async function authenticateAccessToken(ctx: Context, token: string): Promise<User> {
  const found = token.length <= 200 ? await ctx.store.oauthTokens.userByAccessHash(apiKeyHash(token)) : undefined;
  if (found === undefined) throw new OAuthError('invalid_token', 'The access token is invalid or was revoked');
  if (found.accessExpiresTime <= ctx.clock())
    throw new OAuthError('invalid_token', 'The access token expired; get a new one with the refresh_token grant');
  if (found.user.status !== 'ENABLED') throw new OAuthError('invalid_token', 'The account is not enabled');
  return found.user;
}
