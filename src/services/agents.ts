/** Agent tokens: issued by an operator, shown once, stored only as a hash. */
import { randomBytes } from 'node:crypto';
import { InvalidParameterError } from '../domain/errors.ts';
import type { Agent } from '../domain/agents.ts';
import { AGENT_TOKENS_TOPIC } from './agent-tokens.ts';
import type { Context } from './context.ts';
import { apiKeyHash } from './credentials.ts';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** Creates the agent, or replaces the token of the agent of that name (its old token stops working). */
export async function issueAgentToken(ctx: Context, name: string): Promise<{ agent: Agent; token: string }> {
  if (!NAME.test(name))
    throw new InvalidParameterError('name', 'An agent name is 1-63 letters, digits, dots, dashes or underscores');
  const token = `dca_${randomBytes(30).toString('base64url')}`;
  const agent = await ctx.store.agents.upsertToken(name, apiKeyHash(token), ctx.clock());
  // Servers forget the tokens they verified (services/agent-tokens.ts): the old one stops now.
  ctx.notifier.notify(AGENT_TOKENS_TOPIC);
  return { agent, token };
}
