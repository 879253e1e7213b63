/** Memory growth of this process while work runs (tests that promise streaming, not buffering). */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const MIB = 1024 * 1024;
const SAMPLE_MS = 50;

/**
 * V8's collector, without starting the process with --expose-gc: the flag set at run time makes
 * the next new context carry `gc`. Streaming leaves garbage (chunks already sent) that a busy
 * machine collects later than an idle one; what a test promises is about what stays held.
 */
function collector(): (options: { type: 'minor' | 'major' }) => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as (options: { type: 'minor' | 'major' }) => void;
}

/**
 * The largest growth of resident memory, and of what JavaScript holds (heap, plus the buffers
 * outside it, `external` counting array buffers too), over the baseline while `work` runs, sampled
 * every 50 ms. A sample above the peak so far is taken again after a young-generation collection
 * (a millisecond or so, where a full one every sample would slow the streaming itself).
 */
export async function measuring(work: () => Promise<void>): Promise<{ rssMiB: number; heapMiB: number }> {
  const gc = collector();
  const held = () => {
    const usage = process.memoryUsage();
    return { rss: usage.rss, heap: usage.heapUsed + usage.external };
  };
  // Resident memory is taken as it is: a full collection here could hand pages back and make the
  // work's own buffers look like growth.
  gc({ type: 'minor' });
  const baseline = held();
  const peak = { ...baseline };
  const timer = setInterval(() => {
    let now = held();
    if (now.heap > peak.heap) {
      gc({ type: 'minor' });
      now = held();
    }
    peak.rss = Math.max(peak.rss, now.rss);
    peak.heap = Math.max(peak.heap, now.heap);
  }, SAMPLE_MS);
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
