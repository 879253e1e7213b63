/**
 * The agent's end of an interactive session (docs/api.md#interactive-sessions): long-polls the
 * server for the user's input through the same channel as Appium client side's commands (the
 * agent dials out; the host may sit behind NAT), has the driver do each, answers it, and pushes
 * the device's screen whenever it changed, at once after an input. Keeps the idle timeout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseRelayedInput } from '../domain/interactive.ts';
import type { WebDriverCommandMessage } from '../protocol/v1.ts';
import { type ProtocolClient, sleep } from './client.ts';
import {
  type DeviceInput,
  type ExecutionResult,
  InputRefused,
  type InteractiveDevice,
  type InteractiveEnd,
} from './driver.ts';

const POLL_MS = 20_000;
const LOG_FLUSH_MS = 250;
const LOG_BATCH_LINES = 500;

export interface InteractiveOptions {
  readonly client: ProtocolClient;
  readonly deviceRunId: number;
  readonly signal: AbortSignal;
  /** Where downloaded apps and the log go (inside the job's workDir). */
  readonly dir: string;
  readonly log: (message: string) => void;
  readonly patienceMs: number;
  /** The session ends after this long without input. */
  readonly idleMs: number;
}

export const interactiveLogPath = (dir: string) => path.join(dir, 'interactive.log');

interface Reply {
  readonly status: number;
  readonly body: { value: unknown };
}

export async function serveInteractive(
  options: InteractiveOptions,
  device: InteractiveDevice,
): Promise<InteractiveEnd> {
  const { client, deviceRunId } = options;
  const logFile = interactiveLogPath(options.dir);
  fs.mkdirSync(options.dir, { recursive: true });
  fs.writeFileSync(logFile, '');
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  let lastInput = Date.now();
  let inputs = 0;
  let frames = 0;
  let installs = 0;

  // The screen: looked at every frameIntervalMs, and at once when an input asks (kick).
  let kick: (() => void) | null = null;
  const pushFrames = async () => {
    let last: Buffer | null = null;
    while (!signal.aborted) {
      try {
        const png = await device.frame();
        if (last === null || !png.equals(last)) {
          const answer = await client.frame(deviceRunId, png, Date.now(), { maxElapsedMs: 5000, signal });
          last = png;
          frames += 1;
          if (answer.ended) return;
        }
      } catch (error) {
        if (signal.aborted) return;
        options.log(`device run ${deviceRunId}: live frame: ${(error as Error).message}`);
        await sleep(1000, signal);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, device.frameIntervalMs);
        function done() {
          clearTimeout(timer);
          kick = null;
          signal.removeEventListener('abort', done);
          resolve();
        }
        kick = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
  };
  const pushing = pushFrames();

  // The device's log, a batch at a time: each line would be a request of its own otherwise.
  const pushLog = async () => {
    if (device.log === undefined) return;
    let batch: string[] = [];
    let sending: Promise<void> = Promise.resolve();
    const send = () => {
      const lines = batch.splice(0, LOG_BATCH_LINES);
      if (lines.length === 0) return;
      sending = sending.then(async () => {
        try {
          // The session's own signal: the last lines still go when the session ends.
          await client.logLines(deviceRunId, lines, { maxElapsedMs: 5000, signal: options.signal });
        } catch (error) {
          if (!signal.aborted) options.log(`device run ${deviceRunId}: log lines: ${(error as Error).message}`);
        }
      });
    };
    const flusher = setInterval(send, LOG_FLUSH_MS);
    try {
      for await (const line of device.log(signal)) {
        batch.push(line.slice(0, 8000));
        if (batch.length >= LOG_BATCH_LINES) send();
      }
    } catch (error) {
      if (!signal.aborted) options.log(`device run ${deviceRunId}: the device's log: ${(error as Error).message}`);
    } finally {
      clearInterval(flusher);
      while (batch.length > 0) send();
      batch = [];
      await sending;
    }
  };
  const logging = pushLog();

  const run = async (command: WebDriverCommandMessage): Promise<Reply> => {
    let input;
    try {
      input = parseRelayedInput(command.body);
    } catch (error) {
      return { status: 400, body: { value: { message: (error as Error).message } } };
    }
    let deviceInput: DeviceInput;
    if (input.action === 'install') {
      installs += 1;
      const target = path.join(options.dir, 'apps', `${installs}-${path.basename(input.install!.name)}`);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      await client.download(input.install!.url, target, { maxElapsedMs: options.patienceMs, signal });
      deviceInput = {
        action: 'install',
        app: { path: target, name: input.install!.name, properties: input.install!.properties },
      };
    } else deviceInput = input;
    try {
      return { status: 200, body: { value: (await device.input(deviceInput)) ?? null } };
    } catch (error) {
      const status = error instanceof InputRefused ? 400 : 500;
      return { status, body: { value: { message: (error as Error).message } } };
    }
  };

  const end = async (reason: InteractiveEnd['reason']): Promise<InteractiveEnd> => {
    stop.abort();
    await Promise.all([pushing, logging]);
    fs.appendFileSync(logFile, `${new Date().toISOString()} session ended: ${reason}\n`);
    return { reason, inputs, frames, log: logFile };
  };

  for (;;) {
    if (options.signal.aborted) return end('stopped');
    const idleLeft = options.idleMs - (Date.now() - lastInput);
    if (idleLeft <= 0) return end('idle');
    let poll;
    try {
      poll = await client.webdriverCommands(deviceRunId, Math.max(0, Math.min(POLL_MS, idleLeft)), {
        maxElapsedMs: options.patienceMs,
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal.aborted) return end('stopped');
      options.log(`device run ${deviceRunId}: interactive input: ${(error as Error).message}`);
      await sleep(1000, options.signal);
      continue;
    }
    for (const command of poll.commands) {
      lastInput = Date.now();
      inputs += 1;
      const reply = await run(command).catch((error: Error): Reply => ({
        status: 500,
        body: { value: { message: error.message } },
      }));
      (kick as (() => void) | null)?.();
      await client.webdriverAnswer(
        deviceRunId,
        { commandId: command.id, status: reply.status, body: JSON.stringify(reply.body) },
        { maxElapsedMs: options.patienceMs, signal: options.signal },
      );
      const action = command.path.split('/').pop();
      fs.appendFileSync(logFile, `${new Date().toISOString()} ${action} ${logged(command.body)} -> ${reply.status}\n`);
    }
    if (poll.ended) return end('released');
  }
}

/** What the log keeps of an input: its parameters, not the text typed (it may be a password). */
function logged(body: string): string {
  try {
    const { text, install, ...rest } = JSON.parse(body) as Record<string, unknown>;
    return JSON.stringify({ ...rest, ...(text !== undefined && { text: `(${String(text).length} characters)` }) });
  } catch {
    return '';
  }
}

/** A session's end as its device run's result: one test case, passed, and the log. */
export function interactiveResult(end: InteractiveEnd, name: string): ExecutionResult {
  const log = { kind: 'log' as const, path: end.log, name: path.basename(end.log) };
  if (end.reason === 'stopped')
    return { outcome: 'STOPPED', failReason: null, testCases: null, exitCode: null, artifacts: [log] };
  return {
    outcome: 'COMPLETED',
    failReason: null,
    testCases: [
      {
        suiteName: 'Interactive',
        className: 'Interactive session',
        methodName: name,
        duration: 0,
        result: 'PASSED',
        errorMessage: null,
        stacktrace: null,
      },
    ],
    exitCode: null,
    artifacts: [log],
  };
}
