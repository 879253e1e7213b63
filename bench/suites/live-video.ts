/**
 * What recording a device session's video costs its device host (issue 20, docs/benchmarks.md):
 * a real `devicecloud agent` process with one virtual Android device, held in an interactive
 * session whose screen keeps changing (a volume key 100 ms after the previous one's answer) while one viewer
 * watches `GET …/live`; the same session with video recording off (the baseline) and on. CPU is
 * the agent's whole process tree, children included (ffmpeg encodes the video), from reserving
 * the device until it is IDLE again, divided by the seconds the session was held. Frames a second
 * are those the viewer received.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { issueAgentToken } from '../../src/services/agents.ts';
import { startInteractiveSession } from '../../src/services/interactive.ts';
import { BIN, type RunningProcess, startCli } from '../../test/support/cli.ts';
import { until } from '../../test/support/until.ts';
import { openBenchContext } from '../support/context.ts';
import { treeCpuSeconds } from '../support/fleet-measures.ts';
import type { Figure, Suite } from '../support/report.ts';
import { seedUser } from '../support/seed.ts';
import { changeScreen, watch } from './live.ts';

export const video: Suite = async ({ quick, log }) => {
  const bench = await openBenchContext('sqlite');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-bench-video-'));
  let agent: RunningProcess | undefined;
  const figures: Figure[] = [];
  try {
    const address = await bench.app.listen({ port: 0, host: '127.0.0.1' });
    const { token } = await issueAgentToken(bench.ctx, 'bench-video-host');
    agent = startCli(['agent', '--server', address, '--devices', '1', '--data-dir', path.join(dataDir, 'agent')], {
      DEVICECLOUD_AGENT_TOKEN: token,
    });
    await agent.waitFor(/registered 1 device/);
    const pid = agent.child.pid!;
    log(`agent ${BIN} running as ${pid}`);
    const user = await seedUser(bench.ctx, 'video');
    const auth = `Basic ${Buffer.from(`${user.apiKey}:`).toString('base64')}`;
    const post = async (url: string, body: unknown) => {
      const response = await fetch(`${address}${url}`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`POST ${url}: ${response.status} ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const deviceOf = async () =>
      (await bench.ctx.store.devices.ofAgent((await bench.ctx.store.agents.list())[0]!.id))[0];
    const device = await until(deviceOf, (found) => found?.state === 'IDLE', 120_000);

    /** One session held `seconds` with the screen changing; answers the agent's CPU and the viewer's frames. */
    const session = async (seconds: number) => {
      const before = treeCpuSeconds([pid])[0]!;
      const reserved = await startInteractiveSession(bench.ctx, user, { deviceId: device!.id });
      const id = reserved.deviceRun.id;
      await until(
        () => bench.ctx.store.deviceRuns.findById(id),
        (run) => run?.state === 'RUNNING',
        120_000,
      );
      const stop = new AbortController();
      const watching = watch(`${address}/api/me/device-sessions/${id}/live`, auth, stop.signal);
      const { inputs, elapsed: held } = await changeScreen(address, auth, id, seconds);
      stop.abort();
      const watched = await watching;
      await post(`/api/me/device-sessions/${id}/release`, {});
      // The video is encoded, joined and uploaded before the device is cleaned and IDLE again.
      await until(deviceOf, (found) => found?.state === 'IDLE', 120_000);
      const videos = await bench.ctx.store.files.videosOf([id]);
      return {
        cpu: treeCpuSeconds([pid])[0]! - before,
        held,
        changes: inputs / held,
        fps: watched.frames / held,
        video: videos.has(id),
        projectId: reserved.deviceRun.projectId,
      };
    };

    const seconds = quick ? 5 : 20;
    // A first session warms the agent up and makes the project of interactive sessions.
    const { projectId } = await session(2);
    const results = new Map<boolean, Awaited<ReturnType<typeof session>>>();
    for (const recording of [false, true]) {
      await post(`/api/me/projects/${projectId}/config`, { videoRecordingEnabled: recording });
      const result = await session(seconds);
      if (result.video !== recording)
        throw new Error(`video ${recording ? 'on' : 'off'}: the session has ${result.video ? 'a' : 'no'} video`);
      log(
        `video ${recording ? 'on' : 'off'}: ${result.cpu.toFixed(2)} s CPU over ${result.held.toFixed(1)} s held, ${result.changes.toFixed(1)} changes/s, ${result.fps.toFixed(1)} frames/s`,
      );
      results.set(recording, result);
    }
    const off = results.get(false)!;
    const on = results.get(true)!;
    const perSecond = (result: typeof off) => (result.cpu / result.held) * 1000;
    figures.push(
      {
        suite: 'video',
        name: 'agent CPU per session-second, video off (virtual device, screen changing, 1 viewer)',
        value: perSecond(off),
        unit: 'ms/s',
      },
      {
        suite: 'video',
        name: 'agent CPU per session-second, video on (ffmpeg included), against video off',
        value: perSecond(on),
        unit: 'ms/s',
        baseline: perSecond(off),
        ratio: perSecond(on) / perSecond(off),
      },
      ...[off, on].map((result) => ({
        suite: 'video',
        name: `live frames a second to the viewer, video ${result === on ? 'on' : 'off'}, against the screen's changes a second`,
        value: result.fps,
        unit: 'fps',
        baseline: result.changes,
        ratio: result.fps / result.changes,
      })),
    );
  } finally {
    await agent?.stop();
    bench.app.server.closeAllConnections();
    await bench.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return figures;
};
