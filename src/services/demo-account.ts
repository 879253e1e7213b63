/** The local cloud's demo account: created on first start, the same key on every start after. */
import type { User } from '../domain/users.ts';
import type { Context } from './context.ts';
import { createUser } from './users.ts';

export const DEMO_EMAIL = 'demo@devicecloud.local';
export const DEMO_PASSWORD = 'demo-password';

export async function ensureDemoAccount(ctx: Context): Promise<User> {
  const existing = await ctx.store.users.findByEmail(DEMO_EMAIL);
  if (existing !== undefined) return existing;
  return createUser(ctx, { email: DEMO_EMAIL, password: DEMO_PASSWORD, plan: 'PLATINUM', firstName: 'Demo', lastName: 'User' });
}
