/** Memory growth of this process while work runs (tests that promise streaming, not buffering). */

const MIB = 1024 * 1024;

/**
 * The largest growth of resident memory, and of what JavaScript holds (heap, plus the buffers
 * outside it), over the baseline while `work` runs, sampled every 10 ms.
 */
export async function measuring(work: () => Promise<void>): Promise<{ rssMiB: number; heapMiB: number }> {
  const held = () => {
    const usage = process.memoryUsage();
    return { rss: usage.rss, heap: usage.heapUsed + usage.external + usage.arrayBuffers };
  };
  const baseline = held();
  const peak = { ...baseline };
  const timer = setInterval(() => {
    const now = held();
    peak.rss = Math.max(peak.rss, now.rss);
    peak.heap = Math.max(peak.heap, now.heap);
  }, 10);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return {
    rssMiB: Math.round((peak.rss - baseline.rss) / MIB),
    heapMiB: Math.round((peak.heap - baseline.heap) / MIB),
  };
}
