import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiKeyHash, generateApiKey } from '../../src/services/credentials.ts';
import {
  apiKeyAssociatedData,
  fixedKeyRing,
  generateSecretKey,
  migrationSealers,
  runSecretsAssociatedData,
  open as unseal,
} from '../../src/services/secret-box.ts';
import { runSecretsOf } from '../../src/services/run-secrets.ts';
import { createStore } from '../../src/store/store.ts';
import { openDatabase } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations/index.ts';
import { ENGINES, POSTGRES_URL } from '../support/engines.ts';

const open = (engine: string, schema: string, sqliteFile = ':memory:') =>
  openDatabase({
    databaseUrl: engine === 'postgres' ? POSTGRES_URL : undefined,
    sqliteFile,
    pgSchema: schema,
    pgPoolSize: 4,
  });

describe.each(ENGINES)('migrations (%s)', (engine) => {
  const schema = () => `${process.env.DEVICECLOUD_TEST_SCHEMA_PREFIX ?? 'dct_'}${randomBytes(6).toString('hex')}`;

  it('applies every step once, however often and however concurrently they are run', async () => {
    const name = schema();
    const databases = await Promise.all([open(engine, name), open(engine, name), open(engine, name)]);
    try {
      // Three servers starting together on PostgreSQL; on SQLite, one process migrating three times.
      if (engine === 'postgres') await Promise.all(databases.map((database) => migrate(database)));
      else await migrate(databases[0]!);
      await migrate(databases[0]!);
      const db = databases[0]!.db as any;
      const rows = await db.selectFrom('kysely_migration').select('name').orderBy('name').execute();
      expect(rows.map((row: { name: string }) => row.name)).toEqual([
        '001_core',
        '002_runs_on_devices',
        '003_oauth_tokens',
        '004_web_sessions',
        '005_final_tallies',
        '006_recorder',
        '007_unknown_memory',
        '008_sealed_api_keys',
        '009_storage_quotas',
        '010_run_secrets',
        '011_device_runs_by_user',
        '012_user_contact',
        '016_device_labels',
        '018_sharing',
        '020_account_pages',
        '021_project_unarchive',
        '023_live_frames',
        '024_properties',
        '025_webdriver',
        '026_webdriver_handoffs',
      ]);
      expect(await db.selectFrom('device_runs').select('id').execute()).toEqual([]);
    } finally {
      for (const database of databases) await database.close();
    }
  });

  it('009 counts the files stored before it, and its triggers count every file after', async () => {
    const database = await open(engine, schema());
    try {
      await migrate(database, { through: '007_unknown_memory' });
      const db = database.db as any;
      // Keys as 007 stored them: 32 letters and digits, beside their SHA-256.
      const apiKey = (email: string) =>
        email
          .replace(/[^a-z]/g, '')
          .padEnd(32, 'K')
          .slice(0, 32);
      const user = async (email: string) =>
        (
          await db
            .insertInto('users')
            .values({
              email,
              password_hash: 'x',
              first_name: '',
              last_name: '',
              status: 'ENABLED',
              role: 'USER',
              plan: 'GOLD',
              api_key: apiKey(email),
              api_key_hash: createHash('sha256').update(apiKey(email)).digest('hex'),
              create_time: 0,
            })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
      const file = (userId: number, size: number) =>
        db
          .insertInto('files')
          .values({
            user_id: userId,
            name: 'f',
            size,
            mimetype: 'x',
            sha256: 's',
            blob_key: 'b',
            state: 'READY',
            direction: 'INPUT',
            properties_json: '{}',
            create_time: 0,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
      const alice = await user('alice@example.com');
      const bob = await user('bob@example.com');
      const carol = await user('carol@example.com');
      await file(alice, 100);
      await file(alice, 250);
      await file(bob, 7);
      await migrate(database, migrationSealers(fixedKeyRing([generateSecretKey()], 'the test ring')));
      const usage = async () =>
        Object.fromEntries(
          (await db.selectFrom('storage_usage').select(['user_id', 'used_bytes']).execute()).map(
            (row: { user_id: number; used_bytes: number }) => [row.user_id, Number(row.used_bytes)],
          ),
        );
      expect(await usage()).toEqual({ [alice]: 350, [bob]: 7 });
      const added = await file(carol, 40);
      await file(alice, 1);
      await db.deleteFrom('files').where('id', '=', added.id).execute();
      await db.deleteFrom('users').where('id', '=', bob).execute();
      expect(await usage()).toEqual({ [alice]: 351, [carol]: 0 });
    } finally {
      await database.close();
    }
  });

  it('refuses a database that a newer version migrated, changing nothing', async () => {
    const database = await open(engine, schema());
    try {
      await migrate(database);
      const db = database.db as any;
      await db
        .insertInto('kysely_migration')
        .values({ name: '999_from_the_future', timestamp: new Date().toISOString() })
        .execute();
      await expect(migrate(database)).rejects.toThrow(/migrated by a newer devicecloud \(999_from_the_future\)/);
    } finally {
      await database.close();
    }
  });

  it('008 seals the plain API keys of an existing database and drops them, on disk too', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-008-'));
    const file = path.join(dir, 'devicecloud.db');
    const database = await open(engine, schema(), file);
    try {
      await migrate(database, { through: '007_unknown_memory' });
      const db = database.db as any;
      const keys = [generateApiKey(), generateApiKey(), generateApiKey()];
      const ids: number[] = [];
      for (const [index, key] of keys.entries()) {
        const row = await db
          .insertInto('users')
          .values({
            email: `u${index}@example.com`,
            password_hash: 'x',
            first_name: 'F',
            last_name: 'L',
            status: 'ENABLED',
            role: 'USER',
            plan: 'GOLD',
            api_key: key,
            api_key_hash: apiKeyHash(key),
            create_time: 1000 + index,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(Number(row.id));
      }
      await db
        .insertInto('web_sessions')
        .values({ user_id: ids[0], token_hash: 'h', csrf_token: 'c', create_time: 5000, expires_time: 9000 })
        .execute();

      // Without the encryption key, keys cannot be sealed: the migration stops, changing nothing.
      await expect(migrate(database)).rejects.toThrow(
        /008_sealed_api_keys failed: sealing the API keys needs the API key encryption key/,
      );
      expect(
        (await db.selectFrom('users').select('api_key').orderBy('id').execute()).map(
          (row: { api_key: string }) => row.api_key,
        ),
      ).toEqual(keys);

      const ring = fixedKeyRing([generateSecretKey()], 'the test ring');
      await migrate(database, migrationSealers(ring));
      const rows = await db.selectFrom('users').selectAll().orderBy('id').execute();
      expect(Object.keys(rows[0])).not.toContain('api_key');
      for (const [index, row] of rows.entries()) {
        expect(row.api_key_hash).toBe(apiKeyHash(keys[index]!));
        expect(row.api_key_key_id).toBe(ring.current().id);
        expect(
          unseal(
            ring,
            { keyId: row.api_key_key_id, ciphertext: row.api_key_sealed },
            apiKeyAssociatedData(ids[index]!),
          ),
        ).toBe(keys[index]);
        expect(JSON.stringify(row)).not.toContain(keys[index]);
      }
      expect(await db.selectFrom('web_sessions').select(['auth_time', 'confirm_failures']).execute()).toEqual([
        { auth_time: 5000, confirm_failures: 0 },
      ]);
      if (engine === 'sqlite') {
        // Deleted text is overwritten and the write-ahead log emptied: the old keys are gone from the disk.
        for (const name of fs.readdirSync(dir)) {
          const bytes = fs.readFileSync(path.join(dir, name));
          for (const key of keys) expect(bytes.includes(Buffer.from(key)), `a plain key in ${name}`).toBe(false);
        }
      }
    } finally {
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('010 moves the passwords of older runs out of their settings, sealed; runs without read as they were', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-010-'));
    const database = await open(engine, schema(), path.join(dir, 'devicecloud.db'));
    try {
      await migrate(database, { through: '009_storage_quotas' });
      const db = database.db as any;
      const user = await db
        .insertInto('users')
        .values({
          email: 'u@example.com',
          password_hash: 'x',
          first_name: 'F',
          last_name: 'L',
          status: 'ENABLED',
          role: 'USER',
          plan: 'GOLD',
          api_key_hash: 'h',
          create_time: 1,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const project = await db
        .insertInto('projects')
        .values({
          user_id: user.id,
          name: 'P',
          type: 'ANDROID',
          os_type: 'ANDROID',
          create_time: 1,
          archiving_strategy: 'NEVER',
          archiving_item_count: 0,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      // Settings as every release before 010 stored them: no version, the passwords among them.
      const v0 = (changes: Record<string, unknown>): Record<string, unknown> => ({
        osType: 'ANDROID',
        frameworkId: 6,
        projectId: Number(project.id),
        deviceGroupId: null,
        deviceIds: [1],
        files: [{ id: 1, action: 'INSTALL' }],
        testRunName: null,
        timeout: 600,
        testRunParameters: [{ key: 'K', value: 'v' }],
        scheduler: 'PARALLEL',
        hookURL: null,
        maxAutoRetriesCount: 0,
        deviceLanguageCode: 'en_US',
        limitationType: null,
        limitationValue: null,
        instrumentationRunner: null,
        withAnnotation: null,
        withoutAnnotation: null,
        applicationUsername: null,
        applicationPassword: null,
        launchApp: true,
        ...changes,
      });
      const configs = [
        v0({
          applicationUsername: 'crawler',
          applicationPassword: 'app-secret-0',
          deviceLocale: 'fi_FI',
          wifiEnabled: null,
          googleAccountEmail: 'qa@example.com',
          googleAccountPassword: 'google-secret-0',
        }),
        v0({}),
      ];
      const runs: number[] = [];
      for (const [index, config] of configs.entries()) {
        const row = await db
          .insertInto('test_runs')
          .values({
            project_id: project.id,
            user_id: user.id,
            number: index + 1,
            name: null,
            state: 'WAITING',
            os_type: 'ANDROID',
            create_time: 1,
            config_json: JSON.stringify(config),
            framework_id: 6,
            started_by_id: user.id,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        runs.push(Number(row.id));
      }
      await expect(migrate(database)).rejects.toThrow(
        /010_run_secrets failed: sealing the passwords of test runs needs the API key encryption key/,
      );

      const ring = fixedKeyRing([generateSecretKey()], 'the test ring');
      await migrate(database, migrationSealers(ring));
      const stored = await db.selectFrom('test_runs').select(['id', 'config_json']).orderBy('id').execute();
      const { applicationPassword: _a, googleAccountPassword: _g, ...withoutSecrets } = configs[0]!;
      expect(JSON.parse(stored[0].config_json)).toEqual({ v: 1, ...withoutSecrets });
      expect(JSON.parse(stored[1].config_json)).toEqual(configs[1]);
      const sealed = await db.selectFrom('test_run_secrets').selectAll().execute();
      expect(sealed).toHaveLength(1);
      expect(JSON.stringify(sealed)).not.toMatch(/secret-0/);
      expect(
        JSON.parse(
          unseal(ring, { keyId: sealed[0].key_id, ciphertext: sealed[0].sealed }, runSecretsAssociatedData(runs[0]!)),
        ),
      ).toEqual({ v: 1, applicationPassword: 'app-secret-0', googleAccountPassword: 'google-secret-0' });

      // Both read back: the moved run with its secrets, the untouched one as version 0.
      const store = createStore(database);
      expect((await store.testRuns.findById(runs[0]!))!.config).toEqual({ v: 1, ...withoutSecrets });
      expect(await runSecretsOf(store, ring, runs[0]!)).toEqual({
        v: 1,
        applicationPassword: 'app-secret-0',
        googleAccountPassword: 'google-secret-0',
      });
      const { applicationPassword: _none, ...plain } = configs[1]!;
      expect((await store.testRuns.findById(runs[1]!))!.config).toEqual({ v: 1, ...plain });
      expect(await runSecretsOf(store, ring, runs[1]!)).toBeNull();
      if (engine === 'sqlite') {
        for (const name of fs.readdirSync(dir)) {
          const bytes = fs.readFileSync(path.join(dir, name));
          for (const secret of ['app-secret-0', 'google-secret-0'])
            expect(bytes.includes(Buffer.from(secret)), `${secret} in ${name}`).toBe(false);
        }
      }
    } finally {
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('016 labels the devices known before it from what their hosts last reported', async () => {
    const database = await open(engine, schema());
    try {
      await migrate(database, { through: '012_user_contact' });
      const db = database.db as any;
      const device = (values: Record<string, unknown>) =>
        db
          .insertInto('devices')
          .values({ os_type: 'ANDROID', platform: 'ANDROID', state: 'IDLE', create_time: 1, ...values })
          .returning('id')
          .executeTakeFirstOrThrow();
      const tab = await device({
        display_name: 'Galaxy Tab S9',
        manufacturer: 'samsung',
        release_version: '14.1',
        api_level: 34,
      });
      const phone = await device({
        display_name: 'iPhone 15',
        manufacturer: 'Apple',
        os_type: 'IOS',
        platform: 'IOS',
        release_version: '17.4.1',
        api_level: null,
      });
      await migrate(database);
      const labelsOf = async (id: number) =>
        (
          await db
            .selectFrom('device_labels as dl')
            .innerJoin('labels as l', 'l.id', 'dl.label_id')
            .innerJoin('label_groups as g', 'g.id', 'l.group_id')
            .select(['g.name as group', 'l.name', 'l.display_name'])
            .where('dl.device_id', '=', id)
            .orderBy('g.id')
            .execute()
        ).map((row: { group: string; name: string }) => `${row.group}=${row.name}`);
      expect(await labelsOf(tab.id)).toEqual([
        'android-version=14',
        'api-level=34',
        'manufacturer=samsung',
        'form-factor=tablet',
        'platform=android',
      ]);
      expect(await labelsOf(phone.id)).toEqual([
        'ios-version=17',
        'manufacturer=apple',
        'form-factor=phone',
        'platform=ios',
      ]);
    } finally {
      await database.close();
    }
  });
});
