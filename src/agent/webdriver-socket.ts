/**
 * The agent's end of the WebDriver relay's WebSocket (docs/drivers.md#the-webdriver-socket):
 * one socket to the server for the Appium client side sessions it serves, opened by the agent
 * with its token when the first of them starts and closed when the last ends. A session's
 * commands come down as frames, its answers go up as frames, each acknowledged. When the socket
 * will not open (a server without it, a proxy that refuses upgrades) or breaks, `next` and
 * `answer` say so and the relay (webdriver-relay.ts) goes back to the HTTP long poll, which
 * works with any server.
 */
import WebSocket from 'ws';
import {
  WEBDRIVER_SOCKET_PATH,
  type WebDriverAnswerReport,
  type WebDriverPollResponse,
  type WebDriverSocketAgentFrame,
  type WebDriverSocketServerFrame,
} from '../protocol/v1.ts';

/** How long the socket may take to open before the session polls over HTTP instead. */
const OPEN_MS = 5000;
/** After a socket would not open, how long sessions poll over HTTP without trying again. */
const RETRY_OPEN_MS = 60_000;
const MAX_FRAME_BYTES = 65 * 1024 * 1024;
/** How long an answer may wait for its receipt before it is sent again over HTTP. */
const ACK_MS = 30_000;

/** A session's commands and answers on the socket. */
export interface SocketSession {
  /** The next commands, or none after `waitMs`; undefined once the socket cannot serve the session. */
  next(waitMs: number, signal: AbortSignal): Promise<WebDriverPollResponse | undefined>;
  /** Sends the answer; resolves once the server has it, rejects when it may not have (answer over HTTP then). */
  answer(report: Omit<WebDriverAnswerReport, 'waitMs'>): Promise<void>;
  /** The session is over on this side. */
  close(): void;
}

interface Session {
  readonly queue: WebDriverPollResponse[];
  wake: (() => void) | null;
  broken: boolean;
}

interface Connection {
  readonly ws: WebSocket;
  readonly opened: Promise<boolean>;
  readonly sessions: Map<number, Session>;
  readonly acks: Map<number, { resolve: () => void; reject: (error: Error) => void }>;
}

export type WebDriverSocket = ReturnType<typeof webDriverSocket>;

export function webDriverSocket(options: { serverUrl: () => string; token: string; enabled: boolean }) {
  let current: Connection | null = null;
  let failedAt = -Infinity;

  function connect(): Connection {
    const url = `${options.serverUrl().replace(/^http/, 'ws')}${WEBDRIVER_SOCKET_PATH}`;
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${options.token}` },
      maxPayload: MAX_FRAME_BYTES,
      perMessageDeflate: false,
      handshakeTimeout: OPEN_MS,
    });
    const opened = new Promise<boolean>((resolve) => {
      ws.once('open', () => resolve(true));
      ws.once('close', () => resolve(false));
    });
    const connection: Connection = { ws, opened, sessions: new Map(), acks: new Map() };
    ws.on('error', () => undefined); // 'close' follows, which is what counts
    ws.on('message', (data) => {
      let frame: WebDriverSocketServerFrame;
      try {
        frame = JSON.parse(String(data)) as WebDriverSocketServerFrame;
      } catch {
        return ws.close(1007, 'A frame is not JSON');
      }
      receive(connection, frame);
    });
    ws.on('close', () => {
      if (current === connection) current = null;
      for (const session of connection.sessions.values()) markBroken(session);
      for (const ack of connection.acks.values()) ack.reject(new Error('the WebDriver socket closed'));
      connection.acks.clear();
    });
    return connection;
  }

  function markBroken(session: Session): void {
    session.broken = true;
    session.wake?.();
  }

  function receive(connection: Connection, frame: WebDriverSocketServerFrame): void {
    if (frame.type === 'commands') {
      const session = connection.sessions.get(frame.deviceRunId);
      if (session === undefined) return;
      session.queue.push({ commands: frame.commands, ended: frame.ended });
      session.wake?.();
    } else if (frame.type === 'answered') {
      connection.acks.get(frame.commandId)?.resolve();
      connection.acks.delete(frame.commandId);
    } else if (frame.commandId !== undefined) {
      connection.acks.get(frame.commandId)?.reject(new Error(frame.message));
      connection.acks.delete(frame.commandId);
    } else {
      const session = connection.sessions.get(frame.deviceRunId);
      if (session !== undefined) markBroken(session);
    }
  }

  const send = (connection: Connection, frame: WebDriverSocketAgentFrame) => {
    if (connection.ws.readyState !== WebSocket.OPEN) return false;
    connection.ws.send(JSON.stringify(frame));
    return true;
  };

  return {
    /** The session's channel on the socket, or undefined when there is none (the relay polls over HTTP). */
    async session(deviceRunId: number): Promise<SocketSession | undefined> {
      if (!options.enabled || Date.now() - failedAt < RETRY_OPEN_MS) return undefined;
      const connection = (current ??= connect());
      const session: Session = { queue: [], wake: null, broken: false };
      connection.sessions.set(deviceRunId, session);
      const close = () => {
        if (connection.sessions.get(deviceRunId) === session) connection.sessions.delete(deviceRunId);
        if (connection.sessions.size === 0) {
          if (current === connection) current = null;
          connection.ws.close(1000);
        }
      };
      if (!(await connection.opened) || !send(connection, { type: 'serve', deviceRunId })) {
        failedAt = Date.now();
        close();
        return undefined;
      }
      return {
        async next(waitMs, signal) {
          if (session.queue.length === 0 && !session.broken && !signal.aborted)
            await new Promise<void>((resolve) => {
              const done = () => {
                clearTimeout(timer);
                signal.removeEventListener('abort', done);
                session.wake = null;
                resolve();
              };
              const timer = setTimeout(done, waitMs);
              signal.addEventListener('abort', done, { once: true });
              session.wake = done;
            });
          const polled = session.queue.shift();
          if (polled !== undefined) return polled;
          return session.broken ? undefined : { commands: [], ended: false };
        },
        answer(report) {
          return new Promise((resolve, reject) => {
            if (session.broken || !send(connection, { type: 'answer', deviceRunId, ...report }))
              return reject(new Error('the WebDriver socket is closed'));
            // A server that neither acknowledges nor drops the socket: the answer goes over HTTP.
            const timer = setTimeout(() => {
              connection.acks.delete(report.commandId);
              reject(new Error('the WebDriver socket did not acknowledge an answer'));
            }, ACK_MS);
            const settle = (done: () => void) => {
              clearTimeout(timer);
              done();
            };
            connection.acks.set(report.commandId, {
              resolve: () => settle(resolve),
              reject: (error) => settle(() => reject(error)),
            });
          });
        },
        close,
      };
    },
  };
}
