/**
 * Delivers run-finished notifications: a form POST of `testRunId`, `projectId`, `status` (and the
 * run's `result`) to the run's hookURL, with a timeout and retries with backoff. Deliveries come
 * from an outbox table, so a server restart loses none, and a delivery is taken by one server at
 * a time. A failing hook is recorded and logged; it never holds up a run. A destination inside the
 * server's network is refused (hook-sender.ts) and given up at once: retrying would not change it.
 */
import { hookDestinationRules } from '../domain/hook-destinations.ts';
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
    const states = new Set((stats.get(run.id) ?? []).map((tally) => tally.state));
    const result = states.has('FAILED')
      ? 'FAILED'
      : states.has('WARNING') || states.has('TIMEOUT')
        ? 'WARNING'
        : states.has('ABORTED')
          ? 'ABORTED'
          : 'SUCCEEDED';
    const body = new URLSearchParams({
      testRunId: String(run.id),
      projectId: String(run.projectId),
      status: run.state,
      result,
    });
    let error: string | null = null;
    let refused = false;
    try {
      const status = await postHook({
        url: delivery.url,
        body,
        timeoutMs: HOOK_TIMEOUT_MS,
        rules,
        resolve: deps.resolve,
      });
      if (status >= 300) error = `answered ${status}`;
    } catch (cause) {
      error = (cause as Error).message;
      refused = cause instanceof HookRefusedError;
    }
    if (error === null) {
      await ctx.store.hooks.settle(delivery.id, 'DELIVERED', null);
      delivered += 1;
      continue;
    }
    const final = refused || delivery.attempts + 1 >= HOOK_MAX_ATTEMPTS;
    await ctx.store.hooks.settle(delivery.id, final ? 'FAILED' : 'PENDING', error);
    deps.log(
      `hook for run ${run.id} to ${new URL(delivery.url).origin}: ${error}${final ? '; giving up' : `; retrying in ${backoff / 1000} s`}`,
    );
  }
  return delivered;
}
