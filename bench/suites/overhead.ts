/**
 * Orchestration overhead: the server in this process and an agent process of virtual devices (as
 * `npm start` runs them), a trivial test package, runs started one after another: first on one
 * device, then on four at once. Per device run: time from the run's start to the device run's end,
 * minus the time the test script itself ran (measured by the script). What is left is queueing,
 * wake-up, downloads, install, result upload. Beside it, the CPU time the server (this process)
 * and the agent (with its children: test processes, ffmpeg) spent per device run: on a shared
 * machine the wall times follow the machine's load, the CPU does not.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startAgentProcess } from '../../src/cli/agent-process.ts';
import { type DevicecloudClient, createClient } from '../../src/client/api-client.ts';
import { loadConfig } from '../../src/config.ts';
import { type RunningServer, startServer } from '../../src/server/start.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { zip } from '../../test/support/zips.ts';
import { childrenOf, cpuMsOf } from '../support/processes.ts';
import { seedUser } from '../support/seed.ts';
import { type Figure, type Suite, percentile } from '../support/report.ts';

const EXAMPLES = path.join(import.meta.dirname, '..', '..', 'examples', 'dist');
/** The test: write when it starts and ends (ns), and one passing test case. */
const SCRIPT = `set -eu
s=$(date +%s%N)
mkdir -p "$OUTPUT_DIR"
echo '<testsuite name="t" tests="1"><testcase classname="bench.Trivial" name="passes"/></testsuite>' > "$OUTPUT_DIR/junit.xml"
echo "$DEVICE_RUN_ID $s $(date +%s%N)" >> "$LEDGER"
`;

export const overhead: Suite = async ({ quick, log }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-bench-overhead-'));
  const config = loadConfig({
    flags: { dataDir: path.join(dir, 'server'), port: '0', rateLimitPerUser: '0' },
    defaults: { logLevel: 'warn' },
  });
  const server = await startServer(config);
  const { token } = await issueAgentToken(server.ctx, 'bench');
  const agent = startAgentProcess({
    serverUrl: server.localUrl,
    token,
    dataDir: dir,
    // The script writes its ledger on the host, which a sandbox forbids: the sandbox's own start
    // cost is measured apart (test/drivers/sandbox.test.ts).
    config: {
      ...config,
      driver: 'virtual',
      virtualDevices: 6,
      virtualPrefix: 'bench',
      iosBinary: undefined,
      iosSigningDir: undefined,
      iosSigner: 'go-ios',
      sandbox: 'none',
    },
    log: () => undefined,
    warn: log,
  });
  try {
    await agent.ready;
    const [agentPid] = childrenOf(process.pid).filter((pid) =>
      fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('\0agent\0'),
    );
    if (agentPid === undefined) throw new Error('the agent process was not found');
    // Each side apart: the server (this process: the bench's own requests are few), the agent's
    // process, and its children it waited for (test processes and, with video, ffmpeg).
    const cpuMs = (): CpuSplit => {
      const agentAll = cpuMsOf(agentPid, { withChildren: true });
      const agentOwn = cpuMsOf(agentPid);
      const server = process.cpuUsage();
      return { server: (server.user + server.system) / 1000, agent: agentOwn, children: agentAll - agentOwn };
    };
    // BENCH_OVERHEAD_VIDEO=0: runs without a video, to see what recording costs.
    const video = process.env.BENCH_OVERHEAD_VIDEO !== '0';
    const user = await seedUser(server.ctx, 'overhead');
    const client = createClient({ url: server.localUrl, apiKey: user.apiKey });
    const packagePath = path.join(dir, 'tests.zip');
    fs.writeFileSync(packagePath, await zip([['run-tests.sh', SCRIPT, 0o100755]]));
    const files: Files = [
      { id: (await client.upload(path.join(EXAMPLES, 'sample-app.apk'))).id, action: 'INSTALL' },
      { id: (await client.upload(packagePath)).id, action: 'RUN_TEST' },
    ];
    const ledger = path.join(dir, 'ledger.txt');
    const android = (await client.devices()).filter((device) => device.osType === 'ANDROID');
    const counts =
      process.env.BENCH_OVERHEAD_DEVICES === undefined ? [1, 4] : [Number(process.env.BENCH_OVERHEAD_DEVICES)];
    const figures: Figure[] = [];
    for (const count of counts) {
      const deviceIds = android.slice(0, count).map((device) => device.id);
      const cpuBefore = cpuMs();
      const { overheads, breakdown } = await measure({
        server,
        client,
        files,
        ledger,
        deviceIds,
        runs: quick ? 10 : 40,
        video,
      });
      const cpuAfter = cpuMs();
      const cpuPer = (side: keyof CpuSplit) => (cpuAfter[side] - cpuBefore[side]) / overheads.length;
      const cpuPerDeviceRun = cpuPer('server') + cpuPer('agent') + cpuPer('children');
      const p50 = percentile(overheads, 50);
      log(
        `${count} device(s) at once, ${overheads.length} device runs${video ? '' : ', no video'}: overhead p50 ${p50.toFixed(1)} ms, p90 ${percentile(overheads, 90).toFixed(1)} ms; CPU ${cpuPerDeviceRun.toFixed(1)} ms per device run (server ${cpuPer('server').toFixed(1)}, agent ${cpuPer('agent').toFixed(1)}, tests${video ? ' and ffmpeg' : ''} ${cpuPer('children').toFixed(1)})`,
      );
      figures.push(
        {
          suite: 'overhead',
          name: `run start to device run end, minus the test (${overheads.length} device runs, ${count} at once) p50`,
          value: p50,
          unit: 'ms',
          goal: '< 50',
          met: p50 < 50,
        },
        { suite: 'overhead', name: '  the same, p90', value: percentile(overheads, 90), unit: 'ms' },
        {
          suite: 'overhead',
          name: `  CPU per device run (server, agent, test processes${video ? ', ffmpeg' : ''})`,
          value: cpuPerDeviceRun,
          unit: 'ms',
        },
        { suite: 'overhead', name: '    of which the server', value: cpuPer('server'), unit: 'ms' },
        { suite: 'overhead', name: "    of which the agent's process", value: cpuPer('agent'), unit: 'ms' },
        {
          suite: 'overhead',
          name: `    of which the agent's children (test processes${video ? ', ffmpeg' : ''})`,
          value: cpuPer('children'),
          unit: 'ms',
        },
        ...[...breakdown].map(([phase, values]) => ({
          suite: 'overhead',
          name: `  of which ${phase}, p50`,
          value: percentile(values, 50),
          unit: 'ms',
        })),
      );
    }
    return figures;
  } finally {
    await agent.stop();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

interface CpuSplit {
  readonly server: number;
  readonly agent: number;
  readonly children: number;
}

type Files = Array<{ id: number; action: 'INSTALL' | 'RUN_TEST' }>;

interface Setup {
  readonly server: RunningServer;
  readonly client: DevicecloudClient;
  readonly files: Files;
  readonly ledger: string;
  readonly deviceIds: readonly number[];
  readonly runs: number;
  readonly video: boolean;
}

/** Starts `runs` runs on the devices, one after another: each device run's overhead, and where it went. */
async function measure({
  server,
  client,
  files,
  ledger,
  deviceIds,
  runs,
  video,
}: Setup): Promise<{ overheads: number[]; breakdown: Map<string, number[]> }> {
  // Every device clean and idle first, as between the runs of a CI pipeline: cleaning is not overhead.
  const untilIdle = async () => {
    for (let i = 0; i < 500; i++) {
      const states = [...(await server.ctx.store.devices.byIds([...deviceIds])).values()].map((device) => device.state);
      if (states.every((state) => state === 'IDLE')) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  await untilIdle();
  const overheads: number[] = [];
  const breakdown = new Map<string, number[]>();
  for (let r = 0; r < runs; r++) {
    const run = await client.startRun({
      osType: 'ANDROID',
      frameworkId: 4,
      projectName: 'overhead',
      deviceIds: [...deviceIds],
      files,
      testRunParameters: [{ key: 'LEDGER', value: ledger }],
      videoRecordingEnabled: video,
    });
    let finished = await client.run(run.id);
    while (finished.state !== 'FINISHED') {
      await new Promise((resolve) => setTimeout(resolve, 20));
      finished = await client.run(run.id);
    }
    const scripts = new Map(
      fs
        .readFileSync(ledger, 'utf8')
        .trim()
        .split('\n')
        .map((line) => {
          const [id, start, end] = line.split(' ');
          return [Number(id), Number(BigInt(end!) - BigInt(start!)) / 1e6] as const;
        }),
    );
    for (const session of await client.deviceSessions(run.id)) {
      if (session.state !== 'SUCCEEDED') throw new Error(`device run ${session.id} ended ${session.state}`);
      const script = scripts.get(session.id) ?? 0;
      overheads.push(session.endTime! - finished.createTime - script);
      // Where the time went, by the step timeline the agent reported.
      const steps = await server.ctx.store.deviceRuns.steps(session.id);
      const at = (type: string) => steps.find((step) => step.type === type)?.startTime ?? Number.NaN;
      const phases: Record<string, number> = {
        'queued (run start to claim)': at('PREPARING') - finished.createTime,
        'downloads (claim to install)': at('INSTALL') - at('PREPARING'),
        'install and unzip': at('RUNNING') - at('INSTALL'),
        'test process, minus the test': at('SENDING_RESULTS') - at('RUNNING') - script,
        'results and artifacts upload': session.endTime! - at('SENDING_RESULTS'),
      };
      for (const [phase, ms] of Object.entries(phases)) breakdown.set(phase, [...(breakdown.get(phase) ?? []), ms]);
    }
    await untilIdle();
  }
  return { overheads, breakdown };
}
