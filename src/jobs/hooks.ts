/**
 * Delivers run-finished notifications: a form POST of `testRunId`, `projectId`, `status` (and the
 * run's `result`) to the run's hookURL and to WEBHOOK subscriptions, a message to SLACK ones and an
 * e-mail to EMAIL ones (docs/api.md#notifications), with a timeout and retries with backoff. Deliveries come
 * from an outbox table, so a server restart loses none, and a delivery is taken by one server at
 * a time. A failing hook is recorded and logged; it never holds up a run. A destination inside the
 * server's network is refused (hook-sender.ts) and given up at once: retrying would not change it.
 */
import { type HookDestinationRules, hookDestinationRules } from '../domain/hook-destinations.ts';
import { runMessage, runResultOf } from '../domain/notifications.ts';
import type { Context } from '../services/context.ts';
import { HookRefusedError, type Resolve, postHook } from './hook-sender.ts';

export const HOOK_TIMEOUT_MS = 10_000;
export const HOOK_MAX_ATTEMPTS = 5;

export interface HookDeps {
  readonly ctx: Context;
  readonly log: (message: string) => void;
  /** How hook hosts are resolved (tests give their own); the system resolver by default. */
  readonly resolve?: Resolve;
}

export async function deliverDueHooks(deps: HookDeps): Promise<number> {
  const { ctx } = deps;
  const rules = hookDestinationRules(ctx.limits.hookAllowNetworks);
  let delivered = 0;
  for (const delivery of await ctx.store.hooks.due(ctx.clock())) {
    const backoff = 2000 * 4 ** delivery.attempts;
    if (!(await ctx.store.hooks.take(delivery.id, delivery.attempts, ctx.clock() + backoff))) continue;
    const run = await ctx.store.testRuns.findById(delivery.testRunId);
    if (run === undefined) {
      await ctx.store.hooks.settle(delivery.id, 'FAILED', 'the run was deleted');
      continue;
    }
    const stats = await ctx.store.testRuns.tallies([run.id]);
    const result = runResultOf(new Set((stats.get(run.id) ?? []).map((tally) => tally.state)));
    let error: string | null = null;
    let refused = false;
    try {
      const status = await send(deps, delivery, {
        form: new URLSearchParams({
          testRunId: String(run.id),
          projectId: String(run.projectId),
          status: run.state,
          result,
        }),
        message: runMessage({ id: run.id, projectId: run.projectId, name: run.name, result }),
        rules,
      });
      if (status >= 300) error = `answered ${status}`;
    } catch (cause) {
      error = (cause as Error).message;
      refused = cause instanceof HookRefusedError || cause instanceof NoMailServerError;
    }
    if (error === null) {
      await ctx.store.hooks.settle(delivery.id, 'DELIVERED', null);
      delivered += 1;
      continue;
    }
    const final = refused || delivery.attempts + 1 >= HOOK_MAX_ATTEMPTS;
    await ctx.store.hooks.settle(delivery.id, final ? 'FAILED' : 'PENDING', error);
    const to = delivery.channel === 'EMAIL' ? 'an e-mail address' : new URL(delivery.url).origin;
    deps.log(
      `${delivery.channel === 'EMAIL' ? 'e-mail' : 'hook'} for run ${run.id} to ${to}: ${error}${final ? '; giving up' : `; retrying in ${backoff / 1000} s`}`,
    );
  }
  return delivered;
}

/** No SMTP server is configured: retrying will not help until an operator sets one. */
class NoMailServerError extends Error {}

async function send(
  deps: HookDeps,
  delivery: { readonly url: string; readonly channel: string },
  content: { form: URLSearchParams; message: { subject: string; text: string }; rules: HookDestinationRules },
): Promise<number> {
  const common = { url: delivery.url, timeoutMs: HOOK_TIMEOUT_MS, rules: content.rules, resolve: deps.resolve };
  switch (delivery.channel) {
    case 'EMAIL': {
      const mail = deps.ctx.senders?.mail ?? null;
      if (mail === null) throw new NoMailServerError('no SMTP server is configured (--smtp-url)');
      await mail({ to: delivery.url, subject: content.message.subject, text: content.message.text });
      // The SMTP server took it: a success, in the status terms of the other channels.
      return 200;
    }
    case 'SLACK':
      return postHook({
        ...common,
        body: JSON.stringify({ text: content.message.subject }),
        contentType: 'application/json',
      });
    default:
      return postHook({ ...common, body: content.form });
  }
}
