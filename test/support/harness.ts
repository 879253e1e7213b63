/**
 * A fresh devicecloud for one test: its own store (SQLite in memory, or a PostgreSQL schema of its
 * own), the HTTP app driven through inject() (built once per file and lent from test to test,
 * test/support/app-pool.ts), a clock the test controls, and helpers to create users and records.
 */
import { hookDestinationRules } from '../../src/domain/hook-destinations.ts';
import { notificationSenders } from '../../src/jobs/notification-senders.ts';
import type { FastifyInstance } from 'fastify';
import { XMLParser } from 'fast-xml-parser';
import type { RateLimits } from '../../src/api/plugins/rate-limit.ts';
import type { Flavour } from '../../src/domain/flavours.ts';
import type { Plan, Role, User } from '../../src/domain/users.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { memoryNotifier } from '../../src/store/notifier.ts';
import { type Context, DEFAULT_LIMITS, type Limits } from '../../src/services/context.ts';
import { directoryBlobStore } from '../../src/store/blobs.ts';
import type { PasswordCost } from '../../src/services/credentials.ts';
import { createUser } from '../../src/services/users.ts';
import { type Database, openDatabase } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations/index.ts';
import { createStore } from '../../src/store/store.ts';
import { type KeyRing, migrationSealers, fixedKeyRing, generateSecretKey } from '../../src/services/secret-box.ts';
import { leaseApp } from './app-pool.ts';
import { type Engine, POSTGRES_URL } from './engines.ts';
import { emptySchema, giveBackSchema, newSchemaName, rememberMigratedState, takeSchema } from './pg-schemas.ts';

export interface Harness {
  readonly engine: Engine;
  readonly app: FastifyInstance;
  readonly ctx: Context;
  readonly database: Database;
  /** The blob store's directory (tests compare its contents before and after requests). */
  readonly blobDir: string;
  /** SQL statements executed since the last reset. */
  readonly queries: string[];
  /** Moves the harness clock. */
  setTime(ms: number): void;
  advance(ms: number): void;
  user(options?: { plan?: Plan; role?: Role; email?: string }): Promise<TestUser>;
  close(): Promise<void>;
}

export interface TestUser {
  readonly user: User;
  readonly key: string;
  /** Calls the API as this user. */
  call(method: string, url: string, options?: CallOptions): Promise<Answer>;
}

export interface CallOptions {
  readonly json?: boolean;
  readonly form?: Record<string, string | string[]>;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly text: string;
  /** The JSON body (parsed) when the answer is JSON. */
  readonly body: any;
}

export const START_TIME = Date.UTC(2026, 0, 15, 12, 0, 0);

/**
 * scrypt at a trivial cost: at the real one each account the suite creates or signs in costs
 * ~100 ms of CPU, minutes in all. Hashes still carry their cost, so verifying is the same code.
 */
export const TEST_PASSWORD_COST: PasswordCost = { N: 16, r: 1, p: 1 };

export async function createHarness(
  engine: Engine,
  options: {
    flavour?: Flavour;
    publicUrl?: string;
    limits?: Partial<Limits>;
    rateLimits?: RateLimits;
    keyRing?: KeyRing;
    sqliteFile?: string;
    /** The SMTP server notification e-mails go to (a fake one in tests); none: e-mail cannot be sent. */
    smtpUrl?: string;
  } = {},
): Promise<Harness> {
  const queries: string[] = [];
  // A schema an earlier test migrated and gave back, most often (test/support/pg-schemas.ts).
  const pooled = engine === 'postgres' ? await takeSchema(POSTGRES_URL) : undefined;
  const schema = engine === 'postgres' ? (pooled ?? newSchemaName()) : undefined;
  const database = await openDatabase({
    databaseUrl: engine === 'postgres' ? POSTGRES_URL : undefined,
    sqliteFile: options.sqliteFile ?? ':memory:',
    pgSchema: schema,
    pgPoolSize: 4,
    onQuery: (sql) => queries.push(sql),
  });
  if (pooled !== undefined) await emptySchema(database);
  const keyRing = options.keyRing ?? testKeyRing();
  await migrate(database, migrationSealers(keyRing));
  if (engine === 'postgres' && pooled === undefined) await rememberMigratedState(database);
  let now = START_TIME;
  // In a folder of its own, so that a test can see that nothing was written beside it (other
  // tests, running at the same time, create their folders in the system's temporary one).
  const blobRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-harness-'));
  const blobDir = path.join(blobRoot, 'blobs');
  fs.mkdirSync(blobDir);
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const ctx: Context = {
    store: createStore(database),
    clock: () => now,
    blobs: directoryBlobStore(blobDir),
    notifier: memoryNotifier(),
    limits,
    flavour: options.flavour ?? 'private',
    keyRing,
    senders: notificationSenders({
      smtpUrl: options.smtpUrl,
      mailFrom: 'devicecloud@example.com',
      rules: hookDestinationRules(limits.hookAllowNetworks),
      timeoutMs: 5000,
    }),
    testOnlyPasswordCost: TEST_PASSWORD_COST,
  };
  // Built for an earlier test of the file, most often (test/support/app-pool.ts).
  const lease = await leaseApp(ctx, { rateLimits: options.rateLimits, publicUrl: options.publicUrl });
  const app = lease.app;
  let userCount = 0;

  const harness: Harness = {
    engine,
    app,
    ctx,
    database,
    blobDir,
    queries,
    setTime: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
    },
    async user(userOptions = {}) {
      userCount += 1;
      const user = await createUser(ctx, {
        email: userOptions.email ?? `user${userCount}@example.com`,
        password: 'password-1234',
        plan: userOptions.plan ?? 'GOLD',
        role: userOptions.role,
        firstName: `First${userCount}`,
        lastName: `Last${userCount}`,
      });
      return testUser(app, user, user.apiKey);
    },
    async close() {
      await lease.release();
      await database.close();
      fs.rmSync(blobRoot, { recursive: true, force: true });
      // For the next harness; dropped with the run's other schemas by test/support/global-setup.ts.
      if (schema !== undefined) await giveBackSchema(POSTGRES_URL, schema);
    },
  };
  return harness;
}

/** A key ring of one fresh key, as a server's first start makes. */
export function testKeyRing(): KeyRing {
  return fixedKeyRing([generateSecretKey()], 'the test key ring');
}

export function testUser(app: FastifyInstance, user: User, key: string): TestUser {
  return { user, key, call: (method, url, options) => call(app, method, url, { ...options, key }) };
}

/** One request through inject(); `key` undefined sends no credentials. */
export async function call(
  app: FastifyInstance,
  method: string,
  url: string,
  options: CallOptions & { key?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Basic ${Buffer.from(`${options.key}:`).toString('base64')}`;
  if (options.json) headers.accept = 'application/json';
  let payload: string | undefined;
  if (options.form !== undefined) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(options.form)) {
      for (const item of Array.isArray(value) ? value : [value]) params.append(name, item);
    }
    payload = params.toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  } else if (options.body !== undefined) {
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await app.inject({ method: method as 'GET', url, headers, payload });
  const contentType = String(response.headers['content-type'] ?? '');
  return {
    status: response.statusCode,
    headers: response.headers,
    text: response.body,
    body: contentType.startsWith('application/json') && response.body !== '' ? JSON.parse(response.body) : undefined,
  };
}

const xmlParser = new XMLParser({
  parseTagValue: false,
  trimValues: false,
  htmlEntities: true,
  isArray: (_name, path) => /\.data\.[^.]+$/.test(String(path)),
});

/** Parses an XML answer into nested objects (values stay text). */
export function parseXml(text: string): any {
  return xmlParser.parse(text);
}

/** A multipart/form-data body with one file part (as curl -F file=@... sends it). */
export function multipart(
  fileName: string,
  content: Buffer | string,
  field = 'file',
): { body: Buffer; headers: Record<string, string> } {
  const boundary = `----devicecloud${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return {
    body: Buffer.concat([head, Buffer.isBuffer(content) ? content : Buffer.from(content), tail]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

/** Uploads through inject (binary body), answering like `call`. */
export async function upload(
  app: FastifyInstance,
  key: string,
  url: string,
  fileName: string,
  content: Buffer | string,
  options: { field?: string; cut?: number } = {},
): Promise<Answer> {
  const { body, headers } = multipart(fileName, content, options.field);
  const payload = options.cut === undefined ? body : body.subarray(0, options.cut);
  const response = await app.inject({
    method: 'POST',
    url,
    payload,
    headers: {
      ...headers,
      accept: 'application/json',
      authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
    },
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    text: response.body,
    body: response.body === '' ? undefined : JSON.parse(response.body),
  };
}
