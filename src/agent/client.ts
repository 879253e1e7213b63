/**
 * The agent's HTTP client of the protocol. Requests that fail for reasons that may pass (server
 * restarting, network, 5xx, 429) are retried with capped exponential backoff, for as long as the
 * caller allows: a result must survive a server restart; a heartbeat need not. 4xx answers are
 * final and raised as ProtocolError.
 */
import fs from 'node:fs';
import { setTimeout as wait } from 'node:timers/promises';
import type http from 'node:http';
import type { Readable } from 'node:stream';
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
import { keepAlive, openRequest, readAll, requestText } from './http-text.ts';
import { webDriverSocket } from './webdriver-socket.ts';

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
  /** WebDriver sessions' commands through a WebSocket (default), or only through HTTP long polls. */
  readonly webdriverSocket?: boolean;
}

const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);

export function protocolClient(options: ClientOptions) {
  const bases = options.serverUrls.map((url) => url.replace(/\/+$/, ''));
  if (bases.length === 0) throw new Error('no server URL');
  let current = 0;
  const headers = { authorization: `Bearer ${options.token}`, accept: 'application/json' };
  const pool = keepAlive();
  const socket = webDriverSocket({
    serverUrl: () => bases[current]!,
    token: options.token,
    enabled: options.webdriverSocket ?? true,
  });

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
    throw refusal(used, init.method ?? 'GET', path, response.status, await response.text());
  }

  /** A JSON request, through node:http rather than fetch: a WebDriver command's answer is one, and fetch took twice as long. */
  async function attemptJson(path: string, body: string, signal?: AbortSignal): Promise<unknown> {
    const used = current;
    let answer: { status: number; text: string };
    try {
      answer = await requestText(pool, new URL(`${bases[used]}${path}`), {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
        signal,
      });
    } catch (error) {
      if (!signal?.aborted) moveOn(used);
      throw error;
    }
    if (answer.status >= 200 && answer.status < 300) return JSON.parse(answer.text);
    throw refusal(used, 'POST', path, answer.status, answer.text);
  }

  /**
   * A streamed request through node:http as well (an artifact's upload from its file, an input's
   * download): fetch wrapped the file in web streams and took a connection of its own pool.
   * Answers the response unread; a refusal is read and raised.
   */
  async function attemptStream(
    method: 'GET' | 'PUT',
    path: string,
    extra: Record<string, string>,
    body: Readable | null,
  ): Promise<http.IncomingMessage> {
    const used = current;
    let response: http.IncomingMessage;
    try {
      response = await openRequest(pool, new URL(`${bases[used]}${path}`), method, { ...headers, ...extra }, body);
    } catch (error) {
      moveOn(used);
      throw error;
    }
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) return response;
    throw refusal(used, method, path, status, (await readAll(response)).toString('utf8'));
  }

  /** A server's refusal: retried elsewhere when it answered as a gateway to a dead one. */
  function refusal(used: number, method: string, path: string, status: number, body: string): ProtocolError {
    if (status === 502 || status === 503 || status === 504) moveOn(used);
    let message = body;
    try {
      message = (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      // not JSON: keep the text
    }
    return new ProtocolError(status, `${method} ${path}: ${status} ${message}`.slice(0, 2000));
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

  const post = async <T>(path: string, body: unknown, policy: RetryPolicy, signal?: AbortSignal): Promise<T> => {
    const text = JSON.stringify(body);
    return withRetry(path, policy, async () => (await attemptJson(path, text, signal)) as T);
  };

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
    /** A WebDriver session's commands and answers on the agent's WebSocket; undefined: poll over HTTP. */
    webdriverSocket: (deviceRunId: number) => socket.session(deviceRunId),
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
        const response = await attemptStream(
          'PUT',
          `${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/artifacts?${query}`,
          { 'content-type': 'application/octet-stream', 'content-length': String(size) },
          fs.createReadStream(filePath),
        );
        // Read to its end, so that the connection goes back to the pool.
        await readAll(response);
      }),

    /** Downloads an input file to `target`. */
    download: (url: string, target: string, policy: RetryPolicy) =>
      withRetry(`download ${url}`, policy, async () => {
        const response = await attemptStream('GET', url, {}, null);
        await pipeline(response, fs.createWriteStream(target));
      }),
  };
}

export type ProtocolClient = ReturnType<typeof protocolClient>;

/** Waits `ms`, or less when `signal` aborts; never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return wait(ms, undefined, { signal }).catch(() => undefined);
}
