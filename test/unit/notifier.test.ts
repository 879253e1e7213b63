import { describe, expect, it } from 'vitest';
import { memoryNotifier } from '../../src/store/notifier.ts';

describe('in-process notifier', () => {
  it('wakes waiters of a topic, times out otherwise, and stops on abort', async () => {
    const notifier = memoryNotifier();
    const woken = notifier.wait('agent:1', 5000);
    const other = notifier.wait('agent:2', 30);
    notifier.notify('agent:1');
    expect(await woken).toBe(true);
    expect(await other).toBe(false);
    const controller = new AbortController();
    const aborted = notifier.wait('agent:1', 5000, controller.signal);
    controller.abort();
    expect(await aborted).toBe(false);
    await notifier.close();
  });
});
