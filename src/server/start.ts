/**
 * The server role: open and migrate the store, build the HTTP app, listen. `local` and `serve`
 * both start through here; `close()` stops accepting requests, then closes the database.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../api/app.ts';
import fs from 'node:fs';
import path from 'node:path';
import { type Config, ConfigError, sqliteFile, zipLimitsOf } from '../config.ts';
import { memoryNotifier, postgresNotifier } from '../store/notifier.ts';
import { hookDestinationRules } from '../domain/hook-destinations.ts';
import { notificationSenders } from '../jobs/notification-senders.ts';
import { startReaper } from '../jobs/reaper.ts';
import { startRetention } from '../jobs/retention.ts';
import { graceAfterStart } from '../services/agent-session.ts';
import { type Context, DEFAULT_LIMITS } from '../services/context.ts';
import { type BlobStore, directoryBlobStore } from '../store/blobs.ts';
import { type Database, openDatabase } from '../store/db.ts';
import { migrate } from '../store/migrations/index.ts';
import { type Store, createStore } from '../store/store.ts';
import { sealedCountByKeyId } from '../services/rotate-secrets.ts';
import { type KeyRing, migrationSealers } from '../services/secret-box.ts';
import { openKeyRing } from './secret-keys.ts';
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

export async function openStore(
  config: Config,
  log?: (message: string) => void,
): Promise<{ database: Database; ctx: Context }> {
  // Before the database: a start without its key (or with a bad one) stops here, having changed nothing.
  const { ring: keyRing, madeKeyFile } = openKeyRing(config);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFile(config), log });
  const store = createStore(database);
  try {
    await migrate(database, migrationSealers(keyRing));
    if (madeKeyFile !== null) await refuseNewKeyForSealedDatabase(store, keyRing, madeKeyFile);
  } catch (error) {
    await database.close();
    throw error;
  }
  const ctx: Context = {
    store,
    clock: Date.now,
    blobs: await openBlobStore(config),
    notifier: memoryNotifier(),
    limits: {
      ...DEFAULT_LIMITS,
      maxUploadBytes: config.maxUploadBytes,
      leaseMs: config.leaseMs,
      heartbeatMs: config.heartbeatMs,
      hookAllowNetworks: config.hookAllowNetworks,
      passwordGuesses: config.passwordGuessesPerAccount,
      passwordGuessesPerAddress: config.passwordGuessesPerAddress,
      zip: zipLimitsOf(config),
    },
    flavour: config.flavour,
    keyRing,
    senders: notificationSenders({
      smtpUrl: config.smtpUrl,
      mailFrom: config.mailFrom,
      rules: hookDestinationRules(config.hookAllowNetworks),
    }),
  };
  return { database, ctx };
}

export async function startServer(config: Config): Promise<RunningServer> {
  const logger = pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
    serializers: {
      // Query strings may carry secrets: OAuth tokens, and passwords (GET /oauth/token, and form
      // parameters, which may arrive in the query string on any route). They never reach the log.
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

/**
 * Servers of one cloud that do not share the API key encryption keys cannot show each other's
 * users their keys: said at start rather than found out by a user. (No key is named but by id.)
 */
/**
 * A role that has just made itself a key, in a database whose API keys were sealed with others, is
 * a server (or an admin command) of a cloud that was not given the cloud's keys: it would seal new
 * keys no other server can open. It stops, and takes back the key file it made.
 */
async function refuseNewKeyForSealedDatabase(store: Store, keyRing: KeyRing, madeKeyFile: string): Promise<void> {
  const held = new Set(keyRing.ids());
  const foreign = [...(await sealedCountByKeyId(store))].filter(([id]) => !held.has(id)).map(([id]) => id);
  if (foreign.length === 0) return;
  fs.rmSync(madeKeyFile, { force: true });
  throw new ConfigError(
    `This database's API keys are sealed with keys this machine does not have (${foreign.join(', ')}): give it the cloud's keys in DEVICECLOUD_API_KEY_ENCRYPTION_KEYS or --api-key-encryption-key-file (docs/deploy.md, "Secrets")`,
  );
}

export async function warnOfForeignKeys(ctx: Context, warn: (message: string) => void): Promise<void> {
  const known = new Set(ctx.keyRing.ids());
  const runs = [...(await ctx.store.testRuns.secretsCountByKeyId())].filter(([id]) => !known.has(id));
  if (runs.length > 0) {
    warn(
      `${runs.reduce((sum, [, count]) => sum + count, 0)} runs' passwords are encrypted with keys that ${ctx.keyRing.origin} does not hold ` +
        `(${runs.map(([id]) => id).join(', ')}): this server cannot hand their device runs to agents. Every server of a cloud needs the same keys.`,
    );
  }
  const foreign = [...(await ctx.store.users.countByKeyId())].filter(([id]) => !known.has(id));
  if (foreign.length === 0) return;
  warn(
    `${foreign.reduce((sum, [, count]) => sum + count, 0)} API keys are encrypted with keys that ${ctx.keyRing.origin} does not hold ` +
      `(${foreign.map(([id]) => id).join(', ')}): they keep working, but the dashboard cannot show them. ` +
      'Every server of a cloud needs the same keys (DEVICECLOUD_API_KEY_ENCRYPTION_KEYS; docs/deploy.md, "Secrets").',
  );
}

/** The directory store, or the object store (loaded only then: the AWS SDK is large). */
async function openBlobStore(config: Config): Promise<BlobStore> {
  if (config.blobUrl === undefined) return directoryBlobStore(config.blobDir ?? path.join(config.dataDir, 'blobs'));
  const { s3BlobStore } = await import('../store/blobs-s3.ts');
  return s3BlobStore({
    ...config.blobUrl,
    endpoint: config.s3Endpoint,
    region: config.s3Region,
    forcePathStyle: config.s3ForcePathStyle,
  });
}
