/**
 * Agent tokens this server verified a moment ago (docs/security.md#agent-tokens). An agent sends
 * a request per WebDriver command it answers, and on PostgreSQL the token's lookup was most of
 * what the relay added to a command (docs/benchmarks.md#webdriver-relay): a token found in the
 * database is taken again without a lookup for AGENT_TOKEN_CACHE_MS. A token issued anew (the old
 * one revoked) clears every server that hears the notification (this one; the others on one
 * PostgreSQL when it was issued by a server); elsewhere the old token works until its entry ages
 * out. Unknown tokens are never remembered: each guess costs its lookup, as before.
 */
import type { Agent } from '../domain/agents.ts';
import type { Notifier } from '../store/notifier.ts';
import type { Context } from './context.ts';
import { apiKeyHash } from './credentials.ts';

/** How long a verified token is taken without looking again: how late a revocation may reach a server. */
export const AGENT_TOKEN_CACHE_MS = 5000;
/** Tokens remembered at most (one per agent in practice); the oldest goes first. */
const MAX_TOKENS = 10_000;
/** A token was issued: the old one of that agent must stop working now. */
export const AGENT_TOKENS_TOPIC = 'agent-tokens';

export type AgentTokens = ReturnType<typeof agentTokenCache>;

export function agentTokenCache(ctx: Context) {
  const verified = new Map<string, { agent: Agent; until: number }>();
  /** Counts the clearings: a lookup that a clearing overtook is not remembered. */
  let generation = 0;
  let heard: { notifier: Notifier; stop: AbortController } | undefined;

  /**
   * Listens on the notifier the context has now; the listening starts with the first token
   * verified (nothing is remembered before) and follows the context to another notifier.
   */
  const listen = (notifier: Notifier) => {
    if (heard?.notifier === notifier) return;
    heard?.stop.abort();
    const stop = new AbortController();
    heard = { notifier, stop };
    void (async () => {
      while (!stop.signal.aborted)
        if (await notifier.wait(AGENT_TOKENS_TOPIC, 60_000, stop.signal)) {
          generation += 1;
          verified.clear();
        }
    })();
  };

  return {
    /** The agent whose token this is, or undefined. */
    async verify(token: string): Promise<Agent | undefined> {
      if (!token.startsWith('dca_') || token.length > 100) return undefined;
      listen(ctx.notifier);
      const hash = apiKeyHash(token);
      const now = ctx.clock();
      const known = verified.get(hash);
      if (known !== undefined && now < known.until) return known.agent;
      verified.delete(hash);
      const before = generation;
      const agent = await ctx.store.agents.findByTokenHash(hash);
      if (agent === undefined || generation !== before) return agent;
      if (verified.size >= MAX_TOKENS) verified.delete(verified.keys().next().value!);
      verified.set(hash, { agent, until: now + AGENT_TOKEN_CACHE_MS });
      return agent;
    },
    close: () => heard?.stop.abort(),
  };
}
