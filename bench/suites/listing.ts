/**
 * Listing at scale: GET /api/me/projects?limit=0 (every project, each embedding its runs and their
 * device runs) for 10, 100 and 1,000 projects of 10 runs of 10 device runs: time, bytes and SQL
 * statements. The statements must stay constant, and the time grow no faster than the bytes. And a
 * page of the user's runs sorted by queuePosition, which SQL works out for every run, against the
 * same page in the default order.
 */
import { openBenchContext } from '../support/context.ts';
import { seedDevices, seedProjects } from '../support/seed.ts';
import type { Figure, Suite } from '../support/report.ts';

export const listing: Suite = async ({ quick, log }) => {
  const sizes = quick ? [10, 100] : [10, 100, 1000];
  const figures: Figure[] = [];
  const measured: Array<{ projects: number; ms: number; bytes: number; statements: number }> = [];
  for (const projects of sizes) {
    const bench = await openBenchContext('sqlite');
    try {
      const devices = await seedDevices(bench.ctx, 10);
      const { user } = await seedProjects(bench.ctx, {
        name: `lister${projects}`,
        projects,
        runs: 10,
        deviceRunsPerRun: 10,
        devices,
      });
      const request = {
        method: 'GET' as const,
        url: '/api/me/projects?limit=0',
        headers: {
          authorization: `Basic ${Buffer.from(`${user.apiKey}:`).toString('base64')}`,
          accept: 'application/json',
        },
      };
      await bench.app.inject(request); // warm-up
      const repeats = projects >= 1000 ? 3 : 10;
      const times: number[] = [];
      let bytes = 0;
      let statements = 0;
      for (let i = 0; i < repeats; i++) {
        bench.resetStatements();
        const started = performance.now();
        const response = await bench.app.inject(request);
        times.push(performance.now() - started);
        if (response.statusCode !== 200)
          throw new Error(`listing: ${response.statusCode} ${response.body.slice(0, 200)}`);
        bytes = response.rawPayload.length;
        statements = bench.statements();
      }
      const ms = Math.min(...times);
      measured.push({ projects, ms, bytes, statements });
      log(`${projects} projects: ${ms.toFixed(1)} ms, ${bytes} bytes, ${statements} statements`);
      // A page of the user's runs sorted by their place in the queue, worked out in SQL for every
      // run (store/run-list-columns.ts), against the same page in the default order, in turns.
      const pageTimes = { createTime_d: [] as number[], queuePosition_a: [] as number[] };
      for (let i = 0; i <= 2 * repeats; i++) {
        for (const sort of ['createTime_d', 'queuePosition_a'] as const) {
          const url = `/api/me/runs?limit=20&sort=${sort}`;
          const started = performance.now();
          const response = await bench.app.inject({ ...request, url });
          // The first round warms up.
          if (i > 0) pageTimes[sort].push(performance.now() - started);
          if (response.statusCode !== 200) throw new Error(`listing: ${url} ${response.statusCode}`);
        }
      }
      const byCreateTime = Math.min(...pageTimes.createTime_d);
      const byQueue = Math.min(...pageTimes.queuePosition_a);
      const queueRatio = byQueue / byCreateTime;
      log(
        `${projects * 10} runs: a page by queuePosition ${byQueue.toFixed(1)} ms, by createTime ${byCreateTime.toFixed(1)} ms`,
      );
      figures.push({
        suite: 'listing',
        name: `${projects * 10} runs: a page sorted by queuePosition (baseline: by createTime)`,
        value: byQueue,
        unit: 'ms',
        baseline: byCreateTime,
        ratio: queueRatio,
      });
    } finally {
      await bench.close();
    }
  }
  const smallest = measured[0]!;
  for (const { projects, ms, bytes, statements } of measured) {
    // Cost per byte against the smallest listing: <= 1 means time grew no faster than bytes.
    const growth = ms / bytes / (smallest.ms / smallest.bytes);
    figures.push(
      { suite: 'listing', name: `${projects} projects: time`, value: ms, unit: 'ms' },
      { suite: 'listing', name: `${projects} projects: bytes`, value: bytes, unit: 'B' },
      {
        suite: 'listing',
        name: `${projects} projects: SQL statements`,
        value: statements,
        unit: '',
        goal: `= ${smallest.statements}`,
        met: statements === smallest.statements,
      },
      {
        suite: 'listing',
        name: `${projects} projects: time per byte vs 10 projects`,
        value: growth,
        unit: 'x',
        ratio: growth,
        goal: '<= 1.25',
        met: growth <= 1.25,
      },
    );
  }
  return figures;
};
