/**
 * The agent role: one per device host. It registers its devices, cleans them, then long-polls the
 * server for work for its free devices, runs each device run through the executor, cleans the
 * device after it, and heartbeats so that the server knows it is alive and can tell it what to
 * stop. It never touches the database, and it rides out server restarts by retrying.
 */
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../config-values.ts';
import type { CleaningKind, Flavour } from '../domain/flavours.ts';
import { DEFAULT_AGENT_INPUT_RETENTION_MS } from '../domain/retention.ts';
import type { ZipLimits } from '../domain/zip-limits.ts';
import { PROTOCOL_VERSION } from '../protocol/v1.ts';
import { VERSION } from '../version.ts';
import { protocolClient, sleep } from './client.ts';
import type { DeviceDescription, Driver } from './driver.ts';
import { type Execution, execute } from './executor.ts';
import { inputCache } from './input-cache.ts';

export interface AgentOptions {
  /** Servers of one cloud; the agent moves to the next when one does not answer. */
  readonly serverUrls: readonly string[];
  readonly token: string;
  readonly driver: Driver;
  readonly dataDir: string;
  readonly log?: (message: string) => void;
  /** How long results keep being retried while the server is away (default 30 min). */
  readonly reportPatienceMs?: number;
  /** The input cache's size cap (default 10 GiB). */
  readonly cacheMaxBytes?: number;
  /** What an input zip may expand to, counted while unpacking (default: the zip reader's). */
  readonly zipLimits?: ZipLimits;
  /**
   * The flavour its sandbox was chosen for (chooseSandbox): on a public cloud, an agent set up for
   * another one refuses to work, since its sandbox may let strangers' code reach the host.
   */
  readonly flavour?: Flavour;
  /** WebDriver sessions' commands through a WebSocket (default: true), or only HTTP long polls. */
  readonly webdriverSocket?: boolean;
}

export interface RunningAgent {
  /** Resolves once the devices are registered and their first cleaning has started. */
  readonly ready: Promise<void>;
  /** Device runs in progress, by id. */
  running(): number[];
  /** Stops claiming, stops running device runs (retryable for their users), reports, returns. */
  stop(): Promise<void>;
}

interface DeviceSlot {
  readonly description: DeviceDescription;
  readonly deviceId: number;
  /** free: clean and waiting for work; busy: running or cleaning; out: cleaning failed. */
  status: 'free' | 'busy' | 'out';
}

export function startAgent(options: AgentOptions): RunningAgent {
  const log = options.log ?? ((message: string) => process.stderr.write(`[agent] ${message}\n`));
  const client = protocolClient({
    serverUrls: options.serverUrls,
    token: options.token,
    onRetry: (what, error, delay) => log(`${what} failed (${error.message}); retrying in ${delay} ms`),
    webdriverSocket: options.webdriverSocket,
  });
  const stopping = new AbortController();
  const slots = new Map<number, DeviceSlot>();
  const executions = new Map<number, Execution>();
  let claimRound: AbortController | null = null;
  let heartbeatMs = 5000;
  let claimWaitMs = 25_000;
  let cleaning: CleaningKind = 'FULL';
  const patience = { maxElapsedMs: options.reportPatienceMs ?? 30 * 60_000 };
  let inputRetentionMs = DEFAULT_AGENT_INPUT_RETENTION_MS;
  const cache = inputCache({
    dir: path.join(options.dataDir, 'cache'),
    maxBytes: options.cacheMaxBytes ?? 10 * 1024 ** 3,
    retentionMs: () => inputRetentionMs,
    log,
  });

  /** A device became free (or the agent stops): the current long poll is redone with the new set. */
  const reclaim = () => claimRound?.abort();

  async function register(): Promise<void> {
    // What the host lacks is said once, at start, in words a host's admin can act on.
    for (const message of options.driver.missingTools()) log(message);
    const devices = await options.driver.listDevices();
    const answer = await client.hello(
      {
        protocol: PROTOCOL_VERSION,
        agentVersion: VERSION,
        hostname: os.hostname(),
        devices: devices.map((device) => ({ ...device, executionKinds: [...device.executionKinds] })),
      },
      { maxElapsedMs: Number.POSITIVE_INFINITY, signal: stopping.signal },
    );
    if (answer.flavour === 'public' && options.flavour !== undefined && options.flavour !== 'public') {
      throw new ConfigError(
        `Refusing to work for ${client.serverUrl()}: it is a public cloud, and this agent was set up for the ${options.flavour} flavour (its sandbox may give strangers' code the host's network): set DEVICECLOUD_FLAVOUR=public`,
      );
    }
    heartbeatMs = answer.heartbeatMs;
    claimWaitMs = answer.claimWaitMs;
    cleaning = answer.cleaning ?? 'FULL';
    inputRetentionMs = answer.inputRetentionMs ?? DEFAULT_AGENT_INPUT_RETENTION_MS;
    void cache.sweep().catch((error: Error) => log(`input cache: ${error.message}`));
    for (const { serial, deviceId } of answer.devices) {
      const description = devices.find((device) => device.serial === serial)!;
      slots.set(deviceId, { description, deviceId, status: 'busy' });
    }
    log(`registered ${slots.size} device(s) with ${client.serverUrl()}`);
    for (const slot of slots.values()) void clean(slot);
  }

  /**
   * Cleans the device for its next run. `check`: it comes back from failures in a row or from
   * being out of service, so its health is checked first and it is cleaned FULL (a reboot clears
   * most of what fails runs); a failed check is reported as a failed cleaning, and it stays out.
   */
  async function clean(slot: DeviceSlot, check = false): Promise<void> {
    slot.status = 'busy';
    let report: { ok: boolean; report: string };
    try {
      const health = check ? await options.driver.health(slot.description.serial) : { ok: true as const };
      report = health.ok
        ? await options.driver.clean(slot.description.serial, check ? 'FULL' : cleaning)
        : { ok: false, report: `health check failed: ${health.reason}` };
      if (check && report.ok) report = { ok: true, report: `health checked; ${report.report}` };
    } catch (error) {
      report = { ok: false, report: (error as Error).message };
    }
    try {
      const answer = await client.cleaned(slot.deviceId, report, { ...patience, signal: stopping.signal });
      slot.status = answer.state === 'IDLE' ? 'free' : 'out';
      if (slot.status === 'free') log(`${slot.description.displayName} is clean: ${report.report}`);
      if (slot.status === 'out')
        log(
          `${slot.description.displayName} is out of service: ${report.ok ? 'taken out by the server' : report.report}`,
        );
    } catch (error) {
      slot.status = 'out';
      log(`${slot.description.displayName}: cleaning could not be reported: ${(error as Error).message}`);
    }
    reclaim();
  }

  function start(slot: DeviceSlot, assignment: Parameters<typeof execute>[2]): void {
    slot.status = 'busy';
    log(`device run ${assignment.deviceRunId} on ${slot.description.serial}: starting (${assignment.kind})`);
    const execution = execute(
      {
        client,
        driver: options.driver,
        dataDir: options.dataDir,
        cache,
        zipLimits: options.zipLimits,
        log,
        reportPatienceMs: patience.maxElapsedMs,
      },
      slot.description.serial,
      assignment,
    );
    executions.set(assignment.deviceRunId, execution);
    void execution.done.then(
      ({ checkDevice }) => {
        executions.delete(assignment.deviceRunId);
        if (checkDevice)
          log(`${slot.description.displayName} failed device runs in a row: checking its health and cleaning it fully`);
        if (!stopping.signal.aborted) void clean(slot, checkDevice);
      },
      (error: unknown) => {
        executions.delete(assignment.deviceRunId);
        log(`device run ${assignment.deviceRunId}: ${(error as Error).message}`);
        if (!stopping.signal.aborted) void clean(slot);
      },
    );
  }

  function stopRuns(ids: readonly number[]): void {
    for (const id of ids) executions.get(id)?.stop('aborted');
  }

  async function claimLoop(): Promise<void> {
    let failures = 0;
    while (!stopping.signal.aborted) {
      const free = [...slots.values()].filter((slot) => slot.status === 'free');
      claimRound = new AbortController();
      const round = claimRound;
      const onStop = () => round.abort();
      stopping.signal.addEventListener('abort', onStop, { once: true });
      try {
        if (free.length === 0 && executions.size === 0) {
          await sleep(claimWaitMs, round.signal);
          continue;
        }
        const answer = await client.claim(
          { deviceIds: free.map((slot) => slot.deviceId), running: [...executions.keys()], waitMs: claimWaitMs },
          round.signal,
        );
        failures = 0;
        stopRuns(answer.abort);
        for (const deviceId of answer.clean) {
          const slot = slots.get(deviceId);
          if (slot?.status === 'free') void clean(slot);
        }
        for (const assignment of answer.assignments) {
          // A device run handed out again (its first answer looked lost) is not run twice.
          const slot = slots.get(assignment.deviceId);
          if (slot?.status === 'free' && !executions.has(assignment.deviceRunId)) start(slot, assignment);
          else log(`device run ${assignment.deviceRunId}: ignored, its device is not free or it already runs`);
        }
      } catch (error) {
        if (round.signal.aborted) continue;
        failures += 1;
        const delay = Math.min(250 * 2 ** Math.min(failures, 6), 10_000);
        log(`claim failed (${(error as Error).message}); retrying in ${delay} ms`);
        await sleep(delay, stopping.signal);
      } finally {
        stopping.signal.removeEventListener('abort', onStop);
      }
    }
  }

  /** Devices that appeared since the last look (a phone plugged in) are registered, then cleaned. */
  async function discover(): Promise<void> {
    const known = new Set([...slots.values()].map((slot) => slot.description.serial));
    const fresh = (await options.driver.listDevices()).filter((device) => !known.has(device.serial));
    if (fresh.length === 0) return;
    const answer = await client.addDevices(
      { devices: fresh.map((device) => ({ ...device, executionKinds: [...device.executionKinds] })) },
      { maxElapsedMs: heartbeatMs, signal: stopping.signal },
    );
    for (const { serial, deviceId } of answer.devices) {
      const slot: DeviceSlot = {
        description: fresh.find((device) => device.serial === serial)!,
        deviceId,
        status: 'busy',
      };
      slots.set(deviceId, slot);
      log(`${slot.description.displayName} (${serial}) appeared; registered`);
      void clean(slot);
    }
  }

  async function heartbeatLoop(): Promise<void> {
    while (!stopping.signal.aborted) {
      await sleep(heartbeatMs, stopping.signal);
      if (stopping.signal.aborted) break;
      try {
        await discover();
        const unhealthy = [];
        for (const slot of slots.values()) {
          if (slot.status !== 'free') continue;
          const health = await options.driver.health(slot.description.serial);
          if (!health.ok) unhealthy.push({ deviceId: slot.deviceId, reason: health.reason });
        }
        const answer = await client.heartbeat(
          { running: [...executions.keys()], unhealthy },
          { maxElapsedMs: heartbeatMs, signal: stopping.signal },
        );
        stopRuns(answer.abort);
        // Devices this agent gave up on that an operator returned to service: clean them again.
        for (const deviceId of answer.clean ?? []) {
          const slot = slots.get(deviceId);
          if (slot?.status === 'out') void clean(slot, true);
        }
      } catch (error) {
        log(`heartbeat failed: ${(error as Error).message}`);
      }
    }
  }

  const ready = register();
  const loops = ready.then(() => Promise.all([claimLoop(), heartbeatLoop()]));
  loops.catch((error: unknown) => {
    if (!stopping.signal.aborted) log(`agent stopped: ${(error as Error).message}`);
  });

  return {
    ready,
    running: () => [...executions.keys()],
    async stop() {
      stopping.abort();
      reclaim();
      for (const execution of executions.values()) execution.stop('shutdown');
      // Give the runs a moment to report themselves as interrupted; the server's lease covers the rest.
      await Promise.race([
        Promise.allSettled([...executions.values()].map((execution) => execution.done)),
        sleep(10_000),
      ]);
      await loops.catch(() => undefined);
      await options.driver.close();
    },
  };
}
