/** The users table. */
import type { Kysely, Selectable, Updateable } from 'kysely';
import {
  PROFILE_FIELDS,
  type Plan,
  type ProfileField,
  type Role,
  type User,
  type UserStatus,
} from '../domain/users.ts';
import { prepared } from './prepared.ts';
import type { Tables, UsersTable } from './schema.ts';

export interface NewUserRow {
  readonly email: string;
  readonly passwordHash: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly plan: Plan;
  readonly role: Role;
  readonly apiKeyHash: string;
  readonly createTime: number;
}

/** A user's API key as stored: sealed, with the id of the key that sealed it. */
export interface SealedApiKey {
  readonly keyId: string;
  readonly ciphertext: string;
}

export type ProfileChanges = {
  readonly firstName?: string;
  readonly lastName?: string;
} & { readonly [field in ProfileField]?: string | null };

/** The column of each optional profile field. */
const PROFILE_COLUMNS = {
  organization: 'organization',
  country: 'country',
  timeZone: 'time_zone',
  address: 'address',
  city: 'city',
  code: 'code',
  state: 'state',
  phone: 'phone',
  vatId: 'vat_id',
} as const satisfies Record<ProfileField, keyof UsersTable>;

export type UsersStore = ReturnType<typeof usersStore>;

export function usersStore(db: Kysely<Tables>) {
  const byId = (id: number) => db.selectFrom('users').selectAll().where('id', '=', id);
  // Every request authenticated by API key runs it.
  const byApiKeyHash = prepared(db, 1, (hash: string) =>
    db.selectFrom('users').selectAll().where('api_key_hash', '=', hash),
  );
  return {
    async insert(row: NewUserRow): Promise<User> {
      const inserted = await db
        .insertInto('users')
        .values({
          email: row.email,
          password_hash: row.passwordHash,
          first_name: row.firstName,
          last_name: row.lastName,
          status: 'ENABLED',
          role: row.role,
          plan: row.plan,
          api_key_hash: row.apiKeyHash,
          create_time: row.createTime,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toUser(inserted);
    },

    async findById(id: number): Promise<User | undefined> {
      const row = await byId(id).executeTakeFirst();
      return row && toUser(row);
    },

    async findByEmail(email: string): Promise<User | undefined> {
      const row = await db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
      return row && toUser(row);
    },

    async findByApiKeyHash(hash: string): Promise<User | undefined> {
      const [row] = await byApiKeyHash(hash);
      return row && toUser(row);
    },

    async passwordHashOf(id: number): Promise<string | undefined> {
      const row = await db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirst();
      return row?.password_hash;
    },

    /** A new key: its lookup hash and its sealed form (the key itself is never stored). */
    async setApiKey(id: number, apiKeyHash: string, sealed: SealedApiKey): Promise<void> {
      await db
        .updateTable('users')
        .set({ api_key_hash: apiKeyHash, api_key_sealed: sealed.ciphertext, api_key_key_id: sealed.keyId })
        .where('id', '=', id)
        .execute();
    },

    async sealedApiKeyOf(id: number): Promise<SealedApiKey | undefined> {
      const row = await db
        .selectFrom('users')
        .select(['api_key_sealed', 'api_key_key_id'])
        .where('id', '=', id)
        .executeTakeFirst();
      return row?.api_key_sealed == null || row.api_key_key_id == null
        ? undefined
        : { keyId: row.api_key_key_id, ciphertext: row.api_key_sealed };
    },

    /** Users whose key was sealed with another key than `keyId`, oldest first, a page at a time. */
    async sealedWithOtherKey(
      keyId: string,
      afterId: number,
      limit: number,
    ): Promise<Array<SealedApiKey & { userId: number }>> {
      const rows = await db
        .selectFrom('users')
        .select(['id', 'api_key_sealed', 'api_key_key_id'])
        .where('api_key_key_id', '!=', keyId)
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ userId: row.id, keyId: row.api_key_key_id!, ciphertext: row.api_key_sealed! }));
    },

    /** Re-seals one key, unless it changed meanwhile (a reset): then the reset's row stands. */
    async resealApiKey(id: number, from: SealedApiKey, to: SealedApiKey): Promise<boolean> {
      const result = await db
        .updateTable('users')
        .set({ api_key_sealed: to.ciphertext, api_key_key_id: to.keyId })
        .where('id', '=', id)
        .where('api_key_sealed', '=', from.ciphertext)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** How many keys each key id sealed. */
    async countByKeyId(): Promise<Map<string, number>> {
      const rows = await db
        .selectFrom('users')
        .select(['api_key_key_id'])
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .groupBy('api_key_key_id')
        .execute();
      return new Map(rows.map((row) => [row.api_key_key_id ?? '(none)', Number(row.count)]));
    },

    async setPlan(id: number, plan: Plan): Promise<void> {
      await db.updateTable('users').set({ plan }).where('id', '=', id).execute();
    },

    async setRole(id: number, role: Role): Promise<void> {
      await db.updateTable('users').set({ role }).where('id', '=', id).execute();
    },

    async setStatus(id: number, status: UserStatus): Promise<void> {
      await db.updateTable('users').set({ status }).where('id', '=', id).execute();
    },

    async setPasswordHash(id: number, passwordHash: string): Promise<void> {
      await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
    },

    async updateProfile(id: number, changes: ProfileChanges): Promise<void> {
      const set: Updateable<UsersTable> = {};
      if (changes.firstName !== undefined) set.first_name = changes.firstName;
      if (changes.lastName !== undefined) set.last_name = changes.lastName;
      for (const field of PROFILE_FIELDS) {
        const value = changes[field];
        if (value !== undefined) set[PROFILE_COLUMNS[field]] = value;
      }
      if (Object.keys(set).length > 0) await db.updateTable('users').set(set).where('id', '=', id).execute();
    },

    async touchLogin(id: number, now: number): Promise<void> {
      await db.updateTable('users').set({ last_login_time: now }).where('id', '=', id).execute();
    },

    async touchLaunchedTest(id: number, now: number): Promise<void> {
      await db.updateTable('users').set({ last_launched_test_time: now }).where('id', '=', id).execute();
    },

    async list(): Promise<User[]> {
      const rows = await db.selectFrom('users').selectAll().orderBy('id').execute();
      return rows.map(toUser);
    },
  };
}

export function toUser(row: Selectable<UsersTable>): User {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    organization: row.organization,
    country: row.country,
    timeZone: row.time_zone,
    address: row.address,
    city: row.city,
    code: row.code,
    state: row.state,
    phone: row.phone,
    vatId: row.vat_id,
    status: row.status as UserStatus,
    role: row.role as Role,
    plan: row.plan as Plan,
    createTime: row.create_time,
    lastLoginTime: row.last_login_time,
    lastLaunchedTestTime: row.last_launched_test_time,
  };
}
