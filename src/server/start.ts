/**
 * The server role: open and migrate the store, build the HTTP app, listen. `local` and `serve`
 * both start through here; `close()` stops accepting requests, then closes the database.
 */
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../api/app.ts';
import { type Config, sqliteFile } from '../config.ts';
import type { Context } from '../services/context.ts';
import { type Database, openDatabase } from '../store/db.ts';
import { migrate } from '../store/migrations/index.ts';
import { createStore } from '../store/store.ts';
import { VERSION } from '../version.ts';

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly database: Database;
  readonly ctx: Context;
  /** The URL the server answers at (the public URL when configured). */
  readonly url: string;
  close(): Promise<void>;
}

export async function openStore(config: Config): Promise<{ database: Database; ctx: Context }> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFile(config) });
  try {
    await migrate(database);
  } catch (error) {
    await database.close();
    throw error;
  }
  return { database, ctx: { store: createStore(database), clock: Date.now } };
}

export async function startServer(config: Config): Promise<RunningServer> {
  const { database, ctx } = await openStore(config);
  const logger = pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
    serializers: {
      // Query strings may carry OAuth access tokens; they never reach the log.
      req: (req: { method: string; url: string; ip?: string }) => ({
        method: req.method,
        url: req.url.replace(/([?&]access_token=)[^&]*/gi, '$1[redacted]'),
        ip: req.ip,
      }),
    },
  });
  let app: FastifyInstance;
  try {
    app = await buildApp({
      ctx,
      version: VERSION,
      flavour: config.flavour,
      publicUrl: config.publicUrl,
      bodyLimit: config.bodyLimit,
      trustProxy: config.trustProxy,
      logger,
    });
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await database.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return {
    app,
    database,
    ctx,
    url: config.publicUrl ?? `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`,
    close: async () => {
      await app.close();
      await database.close();
    },
  };
}
