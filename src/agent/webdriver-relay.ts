/**
 * The agent's end of Appium client side (docs/api.md#appium-client-side): long-polls the server for
 * a session's WebDriver commands (the agent dials out; the host may sit behind NAT), hands each to
 * the driver's handler (the virtual device's own WebDriver, or the device's Appium server), and
 * answers it. Keeps what the cloud adds to a session: the idle timeout (`newCommandTimeout`), the
 * result a client sets with `executeScript('bitbar:setResult', ['failed', why])`, the screenshots
 * the client takes, and one more screenshot when the session ends failed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_NEW_COMMAND_TIMEOUT_SECONDS } from '../domain/webdriver.ts';
import type { WebDriverCommandMessage, WebDriverPollResponse } from '../protocol/v1.ts';
import { type ProtocolClient, sleep } from './client.ts';
import type { Artifact, ExecutionResult, SessionEnd, WebDriverHandler, WebDriverReply } from './driver.ts';
import type { SocketSession } from './webdriver-socket.ts';

/** Scripts that set the session's result, as the established services name them. */
const SET_RESULT_SCRIPTS = new Set(['bitbar:setResult', 'devicecloud:setResult', 'testdroid:setResult']);
const POLL_MS = 20_000;

export interface RelayOptions {
  readonly client: ProtocolClient;
  readonly deviceRunId: number;
  readonly signal: AbortSignal;
  /** Where screenshots go (inside the job's workDir). */
  readonly dir: string;
  readonly log: (message: string) => void;
  /** How long answers keep being retried while the server is away. */
  readonly patienceMs: number;
}

/** The session's log on the agent: one line per command, uploaded with the result. */
export const sessionLogPath = (dir: string) => path.join(dir, 'webdriver.log');

export async function serveSession(options: RelayOptions, handle: WebDriverHandler): Promise<SessionEnd> {
  const { client, deviceRunId, signal } = options;
  const artifacts: Artifact[] = [];
  const shots = path.join(options.dir, 'screenshots');
  const logFile = sessionLogPath(options.dir);
  fs.mkdirSync(shots, { recursive: true });
  fs.writeFileSync(logFile, '');
  const sessionLog = appendingLog(logFile, (error) =>
    options.log(`device run ${deviceRunId}: the session's log: ${error.message}`),
  );
  let idleMs = DEFAULT_NEW_COMMAND_TIMEOUT_SECONDS * 1000;
  let lastCommand = Date.now();
  let commands = 0;
  let started = false;
  let sessionPath: string | null = null;
  let verdict: { passed: boolean; message: string | null } = { passed: true, message: null };

  /** Screenshots being written: the session's end waits for them. */
  const saving: Promise<void>[] = [];
  // Read, decoded and written once the client's answer is on its way, not before it (in order).
  const saveScreenshot = (reply: WebDriverReply, label: string) => {
    const save = new Promise((resolve) => setImmediate(resolve)).then(async () => {
      const value = (reply.body as { value?: unknown } | undefined)?.value;
      if (reply.status !== 200 || typeof value !== 'string') return;
      const name = `${String(artifacts.length + 1).padStart(3, '0')}-${label}.png`;
      const file = path.join(shots, name);
      artifacts.push({ kind: 'screenshot', path: file, name });
      await fs.promises.writeFile(file, Buffer.from(value, 'base64'));
    });
    saving.push(
      save.catch((error: unknown) =>
        options.log(`device run ${deviceRunId}: a screenshot: ${(error as Error).message}`),
      ),
    );
  };

  const failureScreenshot = async () => {
    try {
      saveScreenshot(
        await handle({ method: 'GET', path: `${sessionPath ?? '/session/_'}/screenshot`, body: undefined }),
        'failure',
      );
    } catch (error) {
      options.log(`device run ${deviceRunId}: the failure screenshot: ${(error as Error).message}`);
    }
  };

  const run = async (
    command: WebDriverCommandMessage,
  ): Promise<{ reply: WebDriverReply; done: 'deleted' | 'refused' | null }> => {
    // Most commands pass to the device as the client wrote them: their body is read only when the
    // relay looks inside (the session's start, a script that may set the result) or the handler does.
    const text = command.body === '' ? undefined : command.body;
    const readsBody = !started || (command.method === 'POST' && /\/execute\/(sync|async)$/.test(command.path));
    let parsed: unknown;
    const bodyOf = () => (text === undefined ? undefined : (parsed ??= JSON.parse(text) as unknown));
    const body = readsBody ? bodyOf() : undefined;
    if (!started) {
      const caps = (body as { capabilities?: { alwaysMatch?: Record<string, unknown> } } | undefined)?.capabilities
        ?.alwaysMatch;
      const asked = Number(caps?.['appium:newCommandTimeout'] ?? caps?.newCommandTimeout ?? NaN);
      if (Number.isFinite(asked) && asked >= 0) idleMs = asked * 1000;
    }
    if (started) sessionPath ??= command.path.split('/').slice(0, 3).join('/');
    const script = (body as { script?: unknown; args?: unknown[] } | undefined)?.script;
    if (command.method === 'POST' && /\/execute\/(sync|async)$/.test(command.path) && typeof script === 'string') {
      if (SET_RESULT_SCRIPTS.has(script)) {
        const args = (body as { args?: unknown[] }).args ?? [];
        const first = (Array.isArray(args) ? args[0] : undefined) as unknown;
        const status = typeof first === 'object' && first !== null ? (first as { status?: unknown }).status : first;
        const reason = typeof first === 'object' && first !== null ? (first as { reason?: unknown }).reason : args[1];
        verdict = {
          passed: !/^(fail|failed|failure|error)$/i.test(String(status)),
          message: typeof reason === 'string' ? reason.slice(0, 2000) : null,
        };
        if (!verdict.passed) await failureScreenshot();
        return { reply: { status: 200, body: { value: null } }, done: null };
      }
    }
    let reply: WebDriverReply;
    try {
      reply = await handle({
        method: command.method,
        path: command.path,
        text,
        get body() {
          return bodyOf();
        },
      });
    } catch (error) {
      reply = {
        status: 500,
        body: { value: { error: 'unknown error', message: (error as Error).message, stacktrace: '' } },
      };
    }
    if (!started) {
      started = true;
      if (reply.status !== 200) {
        const message = (reply.body as { value?: { message?: unknown } } | undefined)?.value?.message;
        verdict = { passed: false, message: `the session could not start: ${String(message ?? reply.status)}` };
        return { reply, done: 'refused' };
      }
      return { reply, done: null };
    }
    if (command.method === 'GET' && command.path.endsWith('/screenshot')) saveScreenshot(reply, 'screenshot');
    return { reply, done: command.method === 'DELETE' && command.path === sessionPath ? 'deleted' : null };
  };

  const end = async (reason: SessionEnd['reason'], message: string | null): Promise<SessionEnd> => {
    if (reason !== 'deleted' && reason !== 'refused' && message !== null) verdict = { passed: false, message };
    if (!verdict.passed && started && reason !== 'refused' && reason !== 'deleted') {
      // The failure's last picture, then the device's session is closed.
      await failureScreenshot();
      try {
        await handle({ method: 'DELETE', path: sessionPath ?? '/session/_', body: undefined });
      } catch (error) {
        options.log(`device run ${deviceRunId}: closing the session: ${(error as Error).message}`);
      }
    }
    await Promise.all(saving);
    return { reason, passed: verdict.passed, message: verdict.message, commands, artifacts };
  };

  /** How long the next poll may wait: until the idle timeout, at most POLL_MS. */
  const pollWindow = () => {
    const idleLeft = idleMs === 0 ? POLL_MS : idleMs - (Date.now() - lastCommand);
    return Math.max(0, Math.min(POLL_MS, idleLeft));
  };
  // The next commands, when the last answer brought them (it carries the next poll).
  let next: WebDriverPollResponse | null = null;
  // Commands and answers go through the agent's WebSocket while it serves the session; through
  // HTTP long polls when it will not open or once it broke (their answers are the same, and
  // answering one twice changes nothing).
  let socket = await client.webdriverSocket(deviceRunId);
  try {
    return await relayCommands();
  } finally {
    socket?.close();
    await sessionLog.flush();
  }

  /** The socket failed the session: the rest goes over HTTP. */
  function leave(failed: SocketSession): undefined {
    failed.close();
    options.log(`device run ${deviceRunId}: the WebDriver socket failed; polling over HTTP`);
    return undefined;
  }

  async function relayCommands(): Promise<SessionEnd> {
    for (;;) {
      if (signal.aborted) return end('stopped', null);
      if (idleMs !== 0 && idleMs - (Date.now() - lastCommand) <= 0)
        return end('idle', `no command for ${idleMs / 1000} s (newCommandTimeout): the client stopped or vanished`);
      let poll = next;
      next = null;
      try {
        if (poll === null && socket !== undefined) {
          poll = (await socket.next(pollWindow(), signal)) ?? null;
          if (poll === null) socket = leave(socket);
        }
        poll ??= await client.webdriverCommands(deviceRunId, pollWindow(), {
          maxElapsedMs: options.patienceMs,
          signal,
        });
      } catch (error) {
        if (signal.aborted) return end('stopped', null);
        options.log(`device run ${deviceRunId}: WebDriver commands: ${(error as Error).message}`);
        await sleep(1000, signal);
        continue;
      }
      for (const [index, command] of poll.commands.entries()) {
        lastCommand = Date.now();
        commands += 1;
        const { reply, done } = await run(command);
        // The idle time counts from here: the answer's request may wait for the next command.
        lastCommand = Date.now();
        sessionLog.add(`${new Date().toISOString()} ${command.method} ${command.path} -> ${reply.status}\n`);
        const answer = {
          commandId: command.id,
          status: reply.status,
          body: reply.text ?? JSON.stringify(reply.body ?? { value: null }),
        };
        if (socket !== undefined && !(await answered(socket, answer))) socket = leave(socket);
        if (socket === undefined) {
          // The last answer of the batch asks for the next commands in the same round trip.
          const ask = done === null && index === poll.commands.length - 1 && !poll.ended;
          let response;
          try {
            response = await client.webdriverAnswer(
              deviceRunId,
              { ...answer, ...(ask && { waitMs: pollWindow() }) },
              { maxElapsedMs: options.patienceMs, signal },
            );
          } catch (error) {
            if (signal.aborted) return end('stopped', null);
            throw error;
          }
          if (ask && response.commands !== undefined)
            next = { commands: response.commands, ended: response.ended ?? false };
        }
        if (done !== null) return end(done, null);
      }
      if (poll.ended) return end('ended', started ? 'the session was ended by the cloud' : null);
    }
  }
}

/** How long a line of the session's log may wait to be written with the ones after it. */
const SESSION_LOG_EVERY_MS = 100;

/**
 * The session's log, written behind the answers: a synchronous append per command held each answer
 * back by a file system call, and an asynchronous one per command cost more (an open, a write and
 * a close each; issue 19). The lines of SESSION_LOG_EVERY_MS go in one append, in order; `flush`
 * settles once all of them are on disk (the log is uploaded after the session).
 */
function appendingLog(file: string, failed: (error: Error) => void) {
  let lines: string[] = [];
  let timer: NodeJS.Timeout | null = null;
  let written = Promise.resolve();
  const write = (): Promise<void> => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (lines.length > 0) {
      const text = lines.join('');
      lines = [];
      written = written.then(() => fs.promises.appendFile(file, text).catch(failed));
    }
    return written;
  };
  return {
    add(line: string): void {
      lines.push(line);
      timer ??= setTimeout(write, SESSION_LOG_EVERY_MS);
    },
    flush: write,
  };
}

const answered = (socket: SocketSession, answer: Parameters<SocketSession['answer']>[0]) =>
  socket.answer(answer).then(
    () => true,
    () => false,
  );

/** A session's end as a device run's result: one test case named after the session, passed or failed. */
export function sessionResult(end: SessionEnd, name: string, logPath: string): ExecutionResult {
  const log: Artifact = { kind: 'log', path: logPath, name: path.basename(logPath) };
  if (end.reason === 'stopped')
    return {
      outcome: 'STOPPED',
      failReason: null,
      testCases: null,
      exitCode: null,
      artifacts: [...end.artifacts, log],
    };
  return {
    outcome: 'COMPLETED',
    failReason: end.message,
    testCases: [
      {
        suiteName: 'Appium',
        className: 'Appium client side',
        methodName: name,
        duration: 0,
        result: end.passed ? 'PASSED' : 'FAILED',
        errorMessage: end.passed ? null : (end.message ?? 'the session failed'),
        stacktrace: null,
      },
    ],
    exitCode: null,
    artifacts: [...end.artifacts, log],
  };
}
