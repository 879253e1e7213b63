/**
 * The WebDriver relay's WebSocket (docs/drivers.md#the-webdriver-socket): one per agent, which
 * the agent opens (hosts sit behind NAT: the server never dials them), authenticated once at the
 * upgrade with the agent's bearer token. A session's commands go down it as they come and its
 * answers come up, one frame each, instead of one HTTP request per answer carrying the next poll:
 * that request's parsing, routing, validation and socket writes were most of what the relay added
 * per command (docs/benchmarks.md#webdriver-relay). The long poll behind the frames is the HTTP
 * one's (services/webdriver-agent.ts), so the in-memory fast path, the database path and the
 * hand-over between servers are the same; an agent whose socket breaks goes back to HTTP.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { type WebSocket, WebSocketServer } from 'ws';
import { Compile } from 'typebox/compile';
import type { Agent } from '../../domain/agents.ts';
import {
  WEBDRIVER_SOCKET_PATH,
  WebDriverSocketAgentFrame,
  type WebDriverSocketServerFrame,
} from '../../protocol/v1.ts';
import { AGENT_TOKEN_CACHE_MS, type AgentTokens } from '../../services/agent-tokens.ts';
import type { Context } from '../../services/context.ts';
import { answerCommand, giveBackCommands, takeCommands } from '../../services/webdriver-agent.ts';
import type { WebDriverChannels } from '../../services/webdriver-channels.ts';

/** How long one wait for a session's commands lasts before it looks again (the session may be over). */
const POLL_MS = 20_000;
/** A command's body (64 MiB, as the hub takes) and its frame around it. */
const MAX_FRAME_BYTES = 65 * 1024 * 1024;
const frames = Compile(WebDriverSocketAgentFrame);
const CLOSED = new DOMException('The agent closed its WebDriver socket', 'AbortError');

export function registerWebDriverSocket(
  app: FastifyInstance,
  ctx: Context,
  channels: WebDriverChannels,
  agentTokens: AgentTokens,
): void {
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) =>
    void accept(request, socket, head).catch((error: unknown) => {
      app.log.error({ err: error }, 'WebDriver socket upgrade failed');
      refuse(socket, 500, 'Internal Server Error');
    });
  async function accept(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    if ((request.url ?? '').split('?')[0] !== WEBDRIVER_SOCKET_PATH) return refuse(socket, 404, 'Not Found');
    const [scheme, token] = (request.headers.authorization ?? '').split(' ', 2);
    if (scheme?.toLowerCase() !== 'bearer' || !token) return refuse(socket, 401, 'Unauthorized');
    const agent = await agentTokens.verify(token);
    if (agent === undefined) return refuse(socket, 401, 'Unauthorized');
    server.handleUpgrade(request, socket, head, (ws) => {
      serve(ctx, channels, agent, ws);
      // Authenticated once, but not for ever: a token replaced since closes the socket within
      // AGENT_TOKEN_CACHE_MS or so, as its long polls would end (docs/security.md#agent-tokens).
      const check = setInterval(() => {
        void agentTokens.verify(token).then(
          (still) => still?.id === agent.id || ws.close(1008, 'The agent token was replaced'),
          () => undefined,
        );
      }, AGENT_TOKEN_CACHE_MS);
      ws.once('close', () => clearInterval(check));
    });
  }
  app.server.on('upgrade', upgrade);
  app.addHook('preClose', async () => {
    app.server.off('upgrade', upgrade);
    for (const ws of server.clients) ws.terminate();
    server.close();
  });
}

/** Answers an upgrade it will not make, as HTTP, and hangs up. */
function refuse(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
}

function serve(ctx: Context, channels: WebDriverChannels, agent: Agent, ws: WebSocket): void {
  const closed = new AbortController();
  /** The sessions whose commands this socket carries, and what stops that. */
  const served = new Map<number, AbortController>();
  const send = (frame: WebDriverSocketServerFrame, unsent?: () => void) => {
    if (ws.readyState !== ws.OPEN) return unsent?.();
    ws.send(JSON.stringify(frame), (error) => error && unsent?.());
  };
  ws.on('close', () => closed.abort(CLOSED));
  ws.on('error', () => ws.terminate());
  ws.on('message', (data, binary) => {
    // The WebDriver relay's commands in memory wait for an agent that still comes here.
    channels.agentSeen(agent.id);
    let frame: unknown;
    try {
      frame = binary ? undefined : JSON.parse(String(data));
    } catch {
      frame = undefined;
    }
    if (!frames.Check(frame))
      return ws.close(1007, 'A frame is not one of the protocol (docs/drivers.md#the-webdriver-socket)');
    if (frame.type === 'serve') {
      const { deviceRunId } = frame;
      if (served.has(deviceRunId)) return;
      const stop = new AbortController();
      served.set(deviceRunId, stop);
      void commandsOf(deviceRunId, AbortSignal.any([closed.signal, stop.signal])).finally(() =>
        served.delete(deviceRunId),
      );
      return;
    }
    const { deviceRunId, commandId, status, body } = frame;
    answerCommand(ctx, channels, agent, deviceRunId, { commandId, status, body }, closed.signal).then(
      // Behind the client's answer, which the same turn of the event loop resolved: the agent's
      // receipt is not what anyone waits for, and its write cost the client's a socket write's time.
      ({ ok }) => void setImmediate(() => send({ type: 'answered', commandId, ok })),
      (error: unknown) => {
        // The agent answers again over HTTP, and polls there from now on: this socket stops
        // taking the session's commands, which would otherwise reach no one.
        served.get(deviceRunId)?.abort(CLOSED);
        send({ type: 'refused', deviceRunId, commandId, message: (error as Error).message });
      },
    );
  });

  /** The session's commands, sent as they come until it is over, the socket closes or the agent left it. */
  async function commandsOf(deviceRunId: number, signal: AbortSignal): Promise<void> {
    try {
      while (!signal.aborted) {
        const polled = await takeCommands(ctx, channels, agent, deviceRunId, POLL_MS, signal);
        if (polled.commands.length > 0 || polled.ended)
          send({ type: 'commands', deviceRunId, ...polled }, () => {
            // Not written: the socket is going, and the agent polls over HTTP from now on, where it
            // takes them again. This socket stops serving the session (it would take them back).
            served.get(deviceRunId)?.abort(CLOSED);
            void giveBackCommands(ctx, channels, deviceRunId, polled.commands).catch(() => undefined);
          });
        if (polled.ended) return;
      }
    } catch (error) {
      // Not held by this agent (any more), or the database failed: the agent polls over HTTP,
      // where the same error is answered as the protocol's.
      send({ type: 'refused', deviceRunId, message: (error as Error).message });
    }
  }
}
