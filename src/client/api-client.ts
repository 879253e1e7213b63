/**
 * A typed client of devicecloud's public API (JSON), for the CLI, scripts and the tests. It speaks
 * only the public API, with an API key, so it works against any deployment of the established
 * API. Errors are typed: ApiError for an answer the server gave (with its status and message),
 * ConnectionError when no answer came.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type {
  ApiDevice,
  ApiDeviceGroup,
  ApiDeviceSession,
  ApiFile,
  ApiFramework,
  ApiList,
  ApiProject,
  ApiSample,
  ApiScreenshot,
  ApiTestCaseRun,
  ApiTestRun,
  ApiUser,
  TestRunConfig,
} from './api-types.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly url: string,
  ) {
    super(message);
  }
}

export class ConnectionError extends Error {}

export interface ClientOptions {
  /** Base URL of the server, e.g. http://127.0.0.1:8080 (a context path is kept). */
  readonly url: string;
  readonly apiKey: string;
  /** Per-request time limit for everything but uploads and downloads. */
  readonly timeoutMs?: number;
}

export type UploadProgress = (sentBytes: number, totalBytes: number) => void;

/** Everything of a list, page by page (limit 0 means all on this API). */
const ALL = 'limit=0';

export function createClient(options: ClientOptions) {
  const base = `${options.url.replace(/\/+$/, '')}/api`;
  const authorization = `Basic ${Buffer.from(`${options.apiKey}:`).toString('base64')}`;
  const timeoutMs = options.timeoutMs ?? 60_000;

  async function send(
    method: string,
    route: string,
    init: { body?: RequestInit['body']; headers?: Record<string, string>; timeout?: boolean; duplex?: 'half' } = {},
  ): Promise<Response> {
    const url = `${base}${route}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        body: init.body,
        headers: { authorization, accept: 'application/json', ...init.headers },
        signal: init.timeout === false ? undefined : AbortSignal.timeout(timeoutMs),
        ...(init.duplex && { duplex: init.duplex }),
      } as RequestInit);
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason =
        cause?.code === 'ECONNREFUSED' ? 'connection refused' : (cause?.message ?? (error as Error).message);
      throw new ConnectionError(`cannot reach devicecloud at ${options.url} (${reason})`);
    }
    if (response.ok) return response;
    const text = await response.text();
    let message = text.slice(0, 500);
    try {
      const parsed = JSON.parse(text) as { message?: string };
      if (typeof parsed.message === 'string') message = parsed.message;
    } catch {
      // not our error shape (a proxy's page, say): keep the start of the text
    }
    throw new ApiError(response.status, message || response.statusText, url);
  }

  const json = async <T>(method: string, route: string, body?: unknown): Promise<T> => {
    const response = await send(
      method,
      route,
      body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } },
    );
    const text = await response.text();
    return (text === '' ? undefined : JSON.parse(text)) as T;
  };
  const get = <T>(route: string) => json<T>('GET', route);
  const all = async <T>(route: string) =>
    (await get<ApiList<T>>(`${route}${route.includes('?') ? '&' : '?'}${ALL}`)).data;
  const session = (id: number) => `/v2/device-sessions/${id}`;

  return {
    me: () => get<ApiUser>('/me'),
    projects: () => all<ApiProject>('/me/projects'),
    project: (id: number) => get<ApiProject>(`/me/projects/${id}`),
    runs: (projectId: number) => all<ApiTestRun>(`/me/projects/${projectId}/runs`),
    run: (id: number) => get<ApiTestRun>(`/v2/runs/${id}`),
    startRun: (config: TestRunConfig) => json<ApiTestRun>('POST', '/v2/runs', config),
    abortRun: (id: number) => json<ApiTestRun>('POST', `/v2/runs/${id}/abort`),
    /** Retries the named device sessions, or with none the whole run (every device, new sessions). */
    retryRun: (id: number, deviceRunIds?: readonly number[]) =>
      json<ApiTestRun>('POST', `/v2/runs/${id}/retry`, deviceRunIds && { deviceRunIds }),
    /** The run's current device sessions (a retried one is replaced by its retry). */
    deviceSessions: (runId: number) => all<ApiDeviceSession>(`/v2/runs/${runId}/device-sessions`),
    /** One device session by id, a replaced one too. */
    deviceSession: (id: number) => get<ApiDeviceSession>(session(id)),
    /** The step each device session is in, by session id (from the legacy device-run view). */
    currentSteps: async (runId: number) => {
      const legacy = await all<{ id: number; currentState: { deviceRunStateType: string | null } | null }>(
        `/v2/runs/${runId}/device-runs`,
      );
      return new Map(
        legacy.map((deviceRun) => [deviceRun.id, deviceRun.currentState?.deviceRunStateType ?? undefined]),
      );
    },
    testCaseRuns: (sessionId: number) => all<ApiTestCaseRun>(`${session(sessionId)}/test-case-runs`),
    performance: (sessionId: number) => get<ApiSample[]>(`${session(sessionId)}/performance`),
    screenshots: (sessionId: number) => all<ApiScreenshot>(`${session(sessionId)}/screenshots`),
    logs: async (sessionId: number) => (await send('GET', `${session(sessionId)}/logs`, { timeout: false })).text(),
    junit: async (sessionId: number) =>
      (await send('GET', `${session(sessionId)}/junit.xml`, { timeout: false })).text(),
    /** Streams a screenshot to `target`. */
    downloadScreenshot: async (sessionId: number, screenshotId: number, target: string) => {
      const response = await send('GET', `${session(sessionId)}/screenshots/${screenshotId}`, { timeout: false });
      await fs.promises.writeFile(target, Readable.fromWeb(response.body as never));
    },
    devices: () => all<ApiDevice>('/v2/devices'),
    deviceGroups: () => all<ApiDeviceGroup>('/me/device-groups?withPublic=true'),
    groupDevices: (groupId: number) => all<ApiDevice>(`/me/device-groups/${groupId}/devices`),
    frameworks: () => all<ApiFramework>('/me/available-frameworks'),
    files: () => all<ApiFile>('/me/files'),
    /** Uploads a file as multipart form data, streaming it from disk; `onProgress` follows the bytes. */
    upload: async (filePath: string, onProgress?: UploadProgress): Promise<ApiFile> => {
      const size = (await fs.promises.stat(filePath)).size;
      const boundary = `----devicecloud${Date.now().toString(16)}${Math.random().toString(16).slice(2)}`;
      const name = path.basename(filePath).replace(/["\r\n]/g, '_');
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      let sent = 0;
      async function* body() {
        yield head;
        for await (const chunk of fs.createReadStream(filePath, { highWaterMark: 256 * 1024 })) {
          sent += (chunk as Buffer).length;
          onProgress?.(sent, size);
          yield chunk as Buffer;
        }
        yield tail;
      }
      const response = await send('POST', '/me/files', {
        body: Readable.toWeb(Readable.from(body())) as ReadableStream,
        duplex: 'half',
        timeout: false,
        headers: {
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(head.length + size + tail.length),
        },
      });
      return (await response.json()) as ApiFile;
    },
  };
}

export type DevicecloudClient = ReturnType<typeof createClient>;
