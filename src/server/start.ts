/**
 * The server role: open and migrate the store, build the HTTP app, listen. `local` and `serve`
 * both start through here; `close()` stops accepting requests, then closes the database.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../api/app.ts';
import type { Config } from '../config.ts';
import { postgresNotifier } from '../store/notifier.ts';
import { startReaper } from '../jobs/reaper.ts';
import { startRetention } from '../jobs/retention.ts';
import { graceAfterStart } from '../services/agent-session.ts';
import type { Context } from '../services/context.ts';
import type { Database } from '../store/db.ts';
import { openStore, warnOfForeignKeys } from './open-store.ts';
import { VERSION } from '../version.ts';

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly database: Database;
  readonly ctx: Context;
  /** The URL the server answers at (the public URL when configured). */
  readonly url: string;
  /** Where processes on this machine reach it directly (the embedded agent). */
  readonly localUrl: string;
  close(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  const logger = pino({
    level: config.logLevel,
    serializers: {
      // A request is logged as its method, URL and address only: its headers (the API key, the
      // session cookie) never reach the log, whatever logs it. Query strings may carry secrets
      // too: OAuth tokens, and passwords (GET /oauth/token, and form parameters, which may arrive
      // in the query string on any route), which are cut out. (No pino redaction besides: with
      // no headers left, its paths found nothing, at 2 µs a line.)
      req: (req: { method: string; url: string; ip?: string }) => ({
        method: req.method,
        url: req.url.replace(/([?&][^=&]*(?:token|password|secret)[^=&]*=)[^&]*/gi, '$1[redacted]'),
        ip: req.ip,
      }),
    },
  });
  const opened = await openStore(config, (message) => logger.warn(message));
  const { database } = opened;
  await warnOfForeignKeys(opened.ctx, (message) => logger.warn(message));
  let app: FastifyInstance;
  let connections: ReturnType<typeof trackConnections>;
  let ctx = opened.ctx;
  try {
    // Several servers on one PostgreSQL wake each other's waiting agents through LISTEN/NOTIFY.
    if (config.databaseUrl !== undefined && database.dialect === 'postgres') {
      ctx = {
        ...ctx,
        notifier: await postgresNotifier({
          url: config.databaseUrl,
          schema: database.schema ?? 'public',
          db: database.db,
          log: (message) => logger.warn(message),
        }),
      };
    }
    app = await buildApp({
      ctx,
      version: VERSION,
      publicUrl: config.publicUrl,
      bodyLimit: config.bodyLimit,
      trustProxy: config.trustProxy,
      rateLimits: { perUser: config.rateLimitPerUser, perIp: config.rateLimitPerIp },
      logger,
    });
    connections = trackConnections(app.server);
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await ctx.notifier.close();
    await database.close();
    throw error;
  }
  await graceAfterStart(ctx);
  const reaper = startReaper({
    ctx,
    log: (message) => logger.warn(message),
    intervalMs: Math.min(1000, config.heartbeatMs),
    agentTtlMs: 3 * config.heartbeatMs,
  });
  const retention = startRetention({
    ctx,
    log: (message) => logger.info(message),
    intervalMs: config.retentionIntervalMs,
    liveLogRetentionMs: config.liveLogRetentionMs,
  });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const localUrl = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
  return {
    app,
    database,
    ctx,
    url: config.publicUrl ?? localUrl,
    localUrl,
    close: async () => {
      await reaper.stop();
      await retention.stop();
      await connections.drain(() => app.close());
      await ctx.notifier.close();
      await database.close();
    },
  };
}

/**
 * Closes the app gracefully: requests in flight finish, then their connections close. Node's own
 * idle sweep misses keep-alive connections that become idle after `close()` began (a long poll
 * answered on shutdown), which would hold the server open until their keep-alive timeout; this
 * sweep follows every connection's requests itself. Whatever is still busy after `graceMs` is cut.
 */
function trackConnections(server: FastifyInstance['server']): {
  drain(close: () => Promise<void>, graceMs?: number): Promise<void>;
} {
  const busy = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    busy.set(socket, 0);
    socket.once('close', () => busy.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    response.once('close', () => busy.has(socket) && busy.set(socket, busy.get(socket)! - 1));
  });
  return {
    async drain(close, graceMs = 10_000) {
      const started = performance.now();
      const sweep = setInterval(() => {
        const late = performance.now() - started > graceMs;
        for (const [socket, requests] of busy) if (late || requests === 0) socket.destroy();
      }, 20);
      try {
        await close();
      } finally {
        clearInterval(sweep);
      }
    },
  };
}
