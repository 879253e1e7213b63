/**
 * The store as every role that works on the cloud's data opens it: the server (start.ts) and the
 * operator's commands (cli/admin-commands.ts). Apart from the server so that an admin command does
 * not load the HTTP layer, the jobs and their packages (a third of its start-up CPU).
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Config, ConfigError, sqliteFile, zipLimitsOf } from '../config.ts';
import { hookDestinationRules } from '../domain/hook-destinations.ts';
import { notificationSenders } from '../jobs/notification-senders.ts';
import { type Context, DEFAULT_LIMITS } from '../services/context.ts';
import { sealedCountByKeyId } from '../services/rotate-secrets.ts';
import { type KeyRing, migrationSealers } from '../services/secret-box.ts';
import { type BlobStore, directoryBlobStore } from '../store/blobs.ts';
import { type Database, openDatabase } from '../store/db.ts';
import { migrate } from '../store/migrations/index.ts';
import { memoryNotifier } from '../store/notifier.ts';
import { type Store, createStore } from '../store/store.ts';
import { openKeyRing } from './secret-keys.ts';

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

/**
 * Servers of one cloud that do not share the API key encryption keys cannot show each other's
 * users their keys: said at start rather than found out by a user. (No key is named but by id.)
 */
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
