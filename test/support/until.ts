/** Waiting in tests on progress, not on wall time. */

/**
 * Polls `probe` until `done` holds for its value. It gives up only when nothing moved for
 * `timeoutMs`: neither the value nor what `progress` reports (a fake's request count, a process's
 * output, a ledger's length) changed. A slow machine that is getting there is waited for; a stuck
 * one fails with the last value.
 */
export async function until<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
  progress: () => unknown = () => undefined,
): Promise<T> {
  let moved = Date.now();
  let last: string | undefined;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    const seen = JSON.stringify([value, progress()]);
    if (seen !== last) {
      last = seen;
      moved = Date.now();
    } else if (Date.now() - moved > timeoutMs)
      throw new Error(
        `gave up after ${timeoutMs} ms without progress; last value: ${JSON.stringify(value).slice(0, 2000)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
