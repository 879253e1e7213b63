/**
 * Virtual devices' screens and videos (docs/drivers.md#videos): the time to draw a screen of the
 * UI model, and to draw it as a PNG screenshot, each against encoding a blank PNG of the same size
 * (the floor of any screenshot); then the CPU a recorded session costs the host (the agent's
 * drawing and ffmpeg's encoding), as a share of one core per second of video.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PNG } from 'pngjs';
import { recordFrames, rgbaInput } from '../../src/agent/drivers/host/ffmpeg.ts';
import { VIRTUAL_VIDEO_FPS } from '../../src/agent/drivers/virtual/index.ts';
import { LiveScreen } from '../../src/agent/drivers/virtual/screen/live.ts';
import { SCREEN_SIZES, renderScreen } from '../../src/agent/drivers/virtual/screen/render.ts';
import { appScreen } from '../../src/agent/drivers/virtual/screen/ui-model.ts';
import type { Figure, Suite } from '../support/report.ts';

const APP = 'com.devicecloud.sample';

/** Milliseconds per call of `work`, the median of a few rounds. */
function perCall(work: (index: number) => unknown, calls: number): number {
  const rounds: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    for (let index = 0; index < calls; index++) work(index);
    rounds.push((performance.now() - started) / calls);
  }
  return rounds.sort((a, b) => a - b)[2]!;
}

/** CPU seconds of this process and of its children that have ended (Linux: /proc/self/stat). */
function cpuSeconds(): number {
  const own = process.cpuUsage();
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // cutime and cstime, in clock ticks (100 a second on Linux).
  const children = (Number(fields[13]) + Number(fields[14])) / 100;
  return (own.user + own.system) / 1e6 + children;
}

export const screens: Suite = async ({ quick }) => {
  const size = SCREEN_SIZES.ANDROID;
  const names = ['.MainActivity', '.SettingsActivity', '.AboutActivity', 'SignIn'];
  const shown = names.map((name) => appScreen('ANDROID', APP, name));
  const clock = (index: number) => ({ time: `09:${String(index % 60).padStart(2, '0')}`, battery: 80 });
  const calls = quick ? 20 : 100;
  const blank = perCall(() => PNG.sync.write(new PNG({ width: size.width, height: size.height })), calls);
  const draw = perCall((index) => renderScreen(shown[index % shown.length]!, size, clock(index)), calls);
  const screenshot = perCall((index) => renderScreen(shown[index % shown.length]!, size, clock(index)).png(), calls);
  const figures: Figure[] = [
    {
      suite: 'screens',
      name: `draw a ${size.width}x${size.height} screen (RGBA, what the video takes)`,
      value: draw,
      unit: 'ms',
      baseline: blank,
      ratio: draw / blank,
    },
    {
      suite: 'screens',
      name: 'draw a screen as a PNG screenshot',
      value: screenshot,
      unit: 'ms',
      baseline: blank,
      ratio: screenshot / blank,
    },
  ];

  // A recorded session as the virtual driver records one (its live screen, drawn into ffmpeg), the
  // screen changing four times a second, faster than a crawl changes it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-bench-screens-'));
  try {
    const live = new LiveScreen(shown[0]!, 'bench-android-1');
    const seconds = quick ? 4 : 10;
    const before = cpuSeconds();
    const started = performance.now();
    const recording = recordFrames({
      ffmpeg: 'ffmpeg',
      file: path.join(dir, 'video.mp4'),
      input: rgbaInput(live.size.width, live.size.height),
      fps: VIRTUAL_VIDEO_FPS,
      frame: () => live.raster().data,
    });
    for (let change = 0; change < seconds * 4; change++) {
      live.show(shown[change % shown.length]!);
      await sleep(250);
    }
    const video = await recording.stop();
    const wall = (performance.now() - started) / 1000;
    const cpu = cpuSeconds() - before;
    figures.push({
      suite: 'screens',
      name: `CPU of a recorded session (agent + ffmpeg; ${video.file === null ? `no video: ${video.reason}` : `${Math.round(fs.statSync(video.file).size / wall)} B of video a second`})`,
      value: (cpu / wall) * 100,
      unit: '% of a core',
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return figures;
};
