/**
 * The local cloud's demo account: created on first start, the same key on every start after. Its
 * key is printed in the local cloud's banner, unsealed for that (the demo's password is public).
 */
import type { UserWithKey } from '../domain/users.ts';
import type { Context } from './context.ts';
import { createUser, revealApiKey } from './users.ts';

export const DEMO_EMAIL = 'demo@devicecloud.local';
export const DEMO_PASSWORD = 'demo-password';

export async function ensureDemoAccount(ctx: Context): Promise<UserWithKey> {
  const existing = await ctx.store.users.findByEmail(DEMO_EMAIL);
  if (existing !== undefined) return { ...existing, apiKey: await revealApiKey(ctx, existing) };
  return createUser(ctx, {
    email: DEMO_EMAIL,
    password: DEMO_PASSWORD,
    plan: 'PLATINUM',
    firstName: 'Demo',
    lastName: 'User',
  });
}
