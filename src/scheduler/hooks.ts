/**
 * Delivers run-finished notifications: a form POST of `testRunId`, `projectId`, `status` (and the
 * run's `result`) to the run's hookURL, with a timeout and retries with backoff. Deliveries come
 * from an outbox table, so a server restart loses none, and a delivery is taken by one server at
 * a time. A failing hook is recorded and logged; it never holds up a run.
 */
import type { Context } from '../services/context.ts';

export const HOOK_TIMEOUT_MS = 10_000;
export const HOOK_MAX_ATTEMPTS = 5;

export interface HookDeps {
  readonly ctx: Context;
  readonly log: (message: string) => void;
  readonly fetch?: typeof fetch;
}

export async function deliverDueHooks(deps: HookDeps): Promise<number> {
  const { ctx } = deps;
  const send = deps.fetch ?? fetch;
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
    const result = states.has('FAILED') ? 'FAILED' : states.has('WARNING') || states.has('TIMEOUT') ? 'WARNING' : states.has('ABORTED') ? 'ABORTED' : 'SUCCEEDED';
    const body = new URLSearchParams({ testRunId: String(run.id), projectId: String(run.projectId), status: run.state, result });
    let error: string | null = null;
    try {
      const response = await send(delivery.url, { method: 'POST', body, signal: AbortSignal.timeout(HOOK_TIMEOUT_MS), redirect: 'manual' });
      if (response.status >= 300) error = `answered ${response.status}`;
      await response.body?.cancel();
    } catch (cause) {
      error = (cause as Error).message;
    }
    if (error === null) {
      await ctx.store.hooks.settle(delivery.id, 'DELIVERED', null);
      delivered += 1;
      continue;
    }
    const final = delivery.attempts + 1 >= HOOK_MAX_ATTEMPTS;
    await ctx.store.hooks.settle(delivery.id, final ? 'FAILED' : 'PENDING', error);
    deps.log(`hook for run ${run.id} to ${new URL(delivery.url).origin}: ${error}${final ? '; giving up' : `; retrying in ${backoff / 1000} s`}`);
  }
  return delivered;
}
