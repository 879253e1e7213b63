/**
 * The agent's HTTP client of the protocol. Requests that fail for reasons that may pass (server
 * restarting, network, 5xx, 429) are retried with capped exponential backoff, for as long as the
 * caller allows: a result must survive a server restart; a heartbeat need not. 4xx answers are
 * final and raised as ProtocolError.
 */
import fs from 'node:fs';
import { setTimeout as wait } from 'node:timers/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  type CleanedReport,
  type ClaimRequest,
  type ClaimResponse,
  type DevicesRequest,
  type DevicesResponse,
  type HeartbeatRequest,
  type HelloRequest,
  type HelloResponse,
  PROTOCOL_PREFIX,
  type ProgressReport,
  type ResultReport,
  type ResultResponse,
  type StopList,
  type WebDriverAnswerReport,
  type WebDriverAnswerResponse,
  type WebDriverPollResponse,
} from '../protocol/v1.ts';

export class ProtocolError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

export interface RetryPolicy {
  /** Give up after this long (ms); Infinity retries until `signal` aborts. */
  readonly maxElapsedMs: number;
  readonly signal?: AbortSignal;
}

export interface ClientOptions {
  /** One or more servers of the same cloud; requests move to the next when one does not answer. */
  readonly serverUrls: readonly string[];
  readonly token: string;
  /** Called before each retry, for the log. */
  readonly onRetry?: (what: string, error: Error, delayMs: number) => void;
}

const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);

export function protocolClient(options: ClientOptions) {
  const bases = options.serverUrls.map((url) => url.replace(/\/+$/, ''));
  if (bases.length === 0) throw new Error('no server URL');
  let current = 0;
  const headers = { authorization: `Bearer ${options.token}`, accept: 'application/json' };

  /** The server did not answer, or answered as a gateway to a dead one: the next retry goes elsewhere. */
  const moveOn = (failed: number) => {
    if (current === failed) current = (failed + 1) % bases.length;
  };

  async function attempt(path: string, init: RequestInit & { duplex?: 'half' }): Promise<Response> {
    const used = current;
    let response: Response;
    try {
      response = await fetch(`${bases[used]}${path}`, {
        ...init,
        headers: { ...headers, ...(init.headers as Record<string, string>) },
      });
    } catch (error) {
      if (!init.signal?.aborted) moveOn(used);
      throw error;
    }
    if (response.ok) return response;
    if (response.status === 502 || response.status === 503 || response.status === 504) moveOn(used);
    const body = await response.text();
    let message = body;
    try {
      message = (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      // not JSON: keep the text
    }
    throw new ProtocolError(
      response.status,
      `${init.method ?? 'GET'} ${path}: ${response.status} ${message}`.slice(0, 2000),
    );
  }

  async function withRetry<T>(what: string, policy: RetryPolicy, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    let delay = 250;
    for (;;) {
      try {
        return await work();
      } catch (error) {
        const retryable = !(error instanceof ProtocolError) || RETRYABLE_STATUS.has(error.status);
        if (!retryable || policy.signal?.aborted || Date.now() - started + delay > policy.maxElapsedMs) throw error;
        options.onRetry?.(what, error as Error, delay);
        await sleep(delay, policy.signal);
        delay = Math.min(delay * 2, 10_000);
      }
    }
  }

  const post = async <T>(path: string, body: unknown, policy: RetryPolicy, signal?: AbortSignal): Promise<T> =>
    withRetry(path, policy, async () => {
      const response = await attempt(path, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
        signal,
      });
      return (await response.json()) as T;
    });

  return {
    /** The server requests go to now. */
    serverUrl: () => bases[current]!,
    hello: (request: HelloRequest, policy: RetryPolicy) =>
      post<HelloResponse>(`${PROTOCOL_PREFIX}/hello`, request, policy),
    heartbeat: (request: HeartbeatRequest, policy: RetryPolicy) =>
      post<StopList>(`${PROTOCOL_PREFIX}/heartbeat`, request, policy),
    addDevices: (request: DevicesRequest, policy: RetryPolicy) =>
      post<DevicesResponse>(`${PROTOCOL_PREFIX}/devices`, request, policy),
    /** One long poll; the caller loops and retries. */
    claim: (request: ClaimRequest, signal: AbortSignal) =>
      post<ClaimResponse>(`${PROTOCOL_PREFIX}/claims`, request, { maxElapsedMs: 0 }, signal),
    progress: (deviceRunId: number, report: ProgressReport, policy: RetryPolicy) =>
      post<{ abort: boolean }>(`${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/progress`, report, policy),
    result: (deviceRunId: number, report: ResultReport, policy: RetryPolicy) =>
      post<ResultResponse>(`${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/result`, report, policy),
    /** One long poll for a WebDriver session's commands (docs/api.md#appium-client-side); the caller loops. */
    webdriverCommands: (deviceRunId: number, waitMs: number, policy: RetryPolicy) =>
      post<WebDriverPollResponse>(
        `${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/webdriver/commands`,
        { waitMs },
        policy,
        policy.signal,
      ),
    /** With `waitMs`, also the next poll (a long poll then: the caller retries). */
    webdriverAnswer: (deviceRunId: number, answer: WebDriverAnswerReport, policy: RetryPolicy) =>
      post<WebDriverAnswerResponse>(
        `${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/webdriver/answers`,
        answer,
        policy,
        policy.signal,
      ),
    /** The screen of an interactive session, as it changed (docs/api.md#interactive-sessions). */
    frame: (deviceRunId: number, png: Buffer, time: number, policy: RetryPolicy) =>
      withRetry(`frame of ${deviceRunId}`, policy, async () => {
        const response = await attempt(`${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/frames?time=${time}`, {
          method: 'PUT',
          body: new Uint8Array(png),
          headers: { 'content-type': 'image/png' },
          signal: policy.signal,
        });
        return (await response.json()) as { seq: number; ended: boolean };
      }),
    /** Lines of the device's log during an interactive session. */
    logLines: (deviceRunId: number, lines: readonly string[], policy: RetryPolicy) =>
      post<{ ended: boolean }>(`${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/log-lines`, { lines }, policy),
    cleaned: (deviceId: number, report: CleanedReport, policy: RetryPolicy) =>
      post<{ state: string }>(`${PROTOCOL_PREFIX}/devices/${deviceId}/cleaned`, report, policy),

    /** Uploads a file as an artifact, streaming it (a retry re-reads the file). */
    artifact: (deviceRunId: number, filePath: string, name: string, kind: string, policy: RetryPolicy) =>
      withRetry(`artifact ${name}`, policy, async () => {
        const size = (await fs.promises.stat(filePath)).size;
        const query = new URLSearchParams({ name, kind });
        await attempt(`${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/artifacts?${query}`, {
          method: 'PUT',
          body: Readable.toWeb(fs.createReadStream(filePath)) as ReadableStream,
          duplex: 'half',
          headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
        });
      }),

    /** Downloads an input file to `target`. */
    download: (url: string, target: string, policy: RetryPolicy) =>
      withRetry(`download ${url}`, policy, async () => {
        const response = await attempt(url, { method: 'GET' });
        if (response.body === null) throw new Error(`empty answer for ${url}`);
        await pipeline(Readable.fromWeb(response.body as never), fs.createWriteStream(target));
      }),
  };
}

export type ProtocolClient = ReturnType<typeof protocolClient>;

/** Waits `ms`, or less when `signal` aborts; never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return wait(ms, undefined, { signal }).catch(() => undefined);
}
