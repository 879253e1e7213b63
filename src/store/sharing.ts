/**
 * Access groups, their members, and shares (docs/api.md#sharing). `sharedWith` is the one
 * definition of "shared with this user, directly or through an access group they are in" that
 * the projects, runs, device runs and device groups stores add to their owner checks.
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ListQuery } from '../domain/list-query.ts';
import type {
  ACCESS_GROUP_MEMBER_LIST,
  AccessGroup,
  AccessGroupMember,
  AccessGroupScope,
  Share,
  SharedResourceType,
} from '../domain/sharing.ts';
import type { Dialect } from './db.ts';
import type { Tables } from './schema.ts';
import { type ListSql, listConditions, pageOf } from './sql.ts';

type SharedColumn = 'project_id' | 'device_group_id' | 'file_id';

const COLUMN_OF: Readonly<Record<SharedResourceType, SharedColumn>> = {
  PROJECT: 'project_id',
  DEVICE_GROUP: 'device_group_id',
  FILE: 'file_id',
};

/**
 * The ids (of `column`'s kind) shared with the user: by a share naming them, or naming an access
 * group they are a member of. A subquery, so each caller keeps its own single statement.
 */
export function sharedWith(db: Kysely<Tables>, column: SharedColumn, userId: number) {
  return db
    .selectFrom('shares as sh')
    .select(`sh.${column}` as 'sh.project_id')
    .where(`sh.${column}` as 'sh.project_id', 'is not', null)
    .where((eb) =>
      eb.or([
        eb('sh.user_id', '=', userId),
        eb(
          'sh.access_group_id',
          'in',
          eb.selectFrom('access_group_users as agu').select('agu.access_group_id').where('agu.user_id', '=', userId),
        ),
      ]),
    );
}

const GROUP_SQL: ListSql<'id' | 'name' | 'scope' | 'createTime' | 'userId' | 'userEmail'> = {
  columns: {
    id: 'ag.id',
    name: 'ag.name',
    scope: 'ag.scope',
    createTime: 'ag.create_time',
    userId: 'ag.user_id',
    userEmail: 'u.email',
  },
  searchColumns: ['ag.name'],
  tieBreaker: 'ag.id',
};

const MEMBER_SQL: ListSql<keyof (typeof ACCESS_GROUP_MEMBER_LIST)['fields']> = {
  columns: {
    id: 'u.id',
    email: 'u.email',
    firstName: 'u.first_name',
    lastName: 'u.last_name',
    // As domain/users.ts fullName writes it.
    name: "TRIM(u.first_name || ' ' || u.last_name)",
  },
  searchColumns: ['u.email', 'u.first_name', 'u.last_name'],
  tieBreaker: 'u.id',
};

const RESOURCE_TYPE = `CASE WHEN sh.project_id IS NOT NULL THEN 'PROJECT' WHEN sh.device_group_id IS NOT NULL THEN 'DEVICE_GROUP' ELSE 'FILE' END`;
const RESOURCE_ID = 'COALESCE(sh.project_id, sh.device_group_id, sh.file_id)';
const RESOURCE_NAME = 'COALESCE(p.name, dg.display_name, f.name)';

const SHARE_SQL: ListSql<'id' | 'name' | 'resourceId' | 'type'> = {
  columns: { id: 'sh.id', name: RESOURCE_NAME, resourceId: RESOURCE_ID, type: RESOURCE_TYPE },
  searchColumns: [RESOURCE_NAME],
  tieBreaker: 'sh.id',
};

export type SharingStore = ReturnType<typeof sharingStore>;

export function sharingStore(db: Kysely<Tables>, dialect: Dialect) {
  const groups = () =>
    db
      .selectFrom('access_groups as ag')
      .innerJoin('users as u', 'u.id', 'ag.user_id')
      .select(['ag.id', 'ag.user_id', 'ag.name', 'ag.scope', 'ag.create_time', 'u.email as user_email']);
  const members = (groupId: number) =>
    db
      .selectFrom('access_group_users as agu')
      .innerJoin('users as u', 'u.id', 'agu.user_id')
      .where('agu.access_group_id', '=', groupId);
  const shares = () =>
    db
      .selectFrom('shares as sh')
      .leftJoin('projects as p', 'p.id', 'sh.project_id')
      .leftJoin('device_groups as dg', 'dg.id', 'sh.device_group_id')
      .leftJoin('files as f', 'f.id', 'sh.file_id')
      .leftJoin('users as su', 'su.id', 'sh.user_id');
  const shareColumns = [
    'sh.id',
    'sh.owner_id',
    'sh.user_id',
    'sh.access_group_id',
    'sh.create_time',
    'su.email as user_email',
    sql<string>`${sql.raw(RESOURCE_TYPE)}`.as('type'),
    sql<number>`${sql.raw(RESOURCE_ID)}`.as('resource_id'),
    sql<string>`${sql.raw(RESOURCE_NAME)}`.as('name'),
  ] as const;

  return {
    async insertGroup(userId: number, name: string, scope: AccessGroupScope, now: number): Promise<AccessGroup> {
      const { id } = await db
        .insertInto('access_groups')
        .values({ user_id: userId, name, scope, create_time: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      return (await this.findGroup(id))!;
    },

    async findGroup(id: number): Promise<AccessGroup | undefined> {
      const row = await groups().where('ag.id', '=', id).executeTakeFirst();
      return row && toGroup(row);
    },

    /** The group if it exists and belongs to the user. */
    async findOwnedGroup(userId: number, id: number): Promise<AccessGroup | undefined> {
      const row = await groups().where('ag.id', '=', id).where('ag.user_id', '=', userId).executeTakeFirst();
      return row && toGroup(row);
    },

    /** The user's groups, or with `userId` null every user's (operators). */
    async listGroups(
      userId: number | null,
      query: ListQuery<keyof typeof GROUP_SQL.columns>,
    ): Promise<{ total: number; items: AccessGroup[] }> {
      let base = db
        .selectFrom('access_groups as ag')
        .innerJoin('users as u', 'u.id', 'ag.user_id')
        .where((eb) => eb.and(listConditions(dialect, query, GROUP_SQL)));
      if (userId !== null) base = base.where('ag.user_id', '=', userId);
      const { total, rows } = await pageOf(
        base,
        (q) => q.select(['ag.id', 'ag.user_id', 'ag.name', 'ag.scope', 'ag.create_time', 'u.email as user_email']),
        query,
        GROUP_SQL,
      );
      return { total, items: rows.map(toGroup) };
    },

    async updateGroup(id: number, changes: { name?: string; scope?: AccessGroupScope }): Promise<void> {
      if (changes.name === undefined && changes.scope === undefined) return;
      await db.updateTable('access_groups').set(changes).where('id', '=', id).execute();
    },

    async deleteGroup(id: number): Promise<void> {
      await db.deleteFrom('access_groups').where('id', '=', id).execute();
    },

    async listMembers(
      groupId: number,
      query: ListQuery<keyof typeof MEMBER_SQL.columns>,
    ): Promise<{ total: number; items: AccessGroupMember[] }> {
      const base = members(groupId).where((eb) => eb.and(listConditions(dialect, query, MEMBER_SQL)));
      const { total, rows } = await pageOf(
        base,
        (q) => q.select(['u.id', 'u.email', 'u.first_name', 'u.last_name']),
        query,
        MEMBER_SQL,
      );
      return { total, items: rows.map(toMember) };
    },

    async findMember(groupId: number, userId: number): Promise<AccessGroupMember | undefined> {
      const row = await members(groupId)
        .select(['u.id', 'u.email', 'u.first_name', 'u.last_name'])
        .where('u.id', '=', userId)
        .executeTakeFirst();
      return row && toMember(row);
    },

    /** Adds the user to the group; adding a member again changes nothing. */
    async addMember(groupId: number, userId: number): Promise<void> {
      await db
        .insertInto('access_group_users')
        .values({ access_group_id: groupId, user_id: userId })
        .onConflict((oc) => oc.columns(['access_group_id', 'user_id']).doNothing())
        .execute();
    },

    async removeMember(groupId: number, userId: number): Promise<boolean> {
      const result = await db
        .deleteFrom('access_group_users')
        .where('access_group_id', '=', groupId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** The share of that record with that user or group, if there is one. */
    async findShare(
      type: SharedResourceType,
      resourceId: number,
      target: { userId: number } | { accessGroupId: number },
    ): Promise<Share | undefined> {
      let query = shares()
        .select(shareColumns)
        .where(`sh.${COLUMN_OF[type]}` as 'sh.project_id', '=', resourceId);
      query =
        'userId' in target
          ? query.where('sh.user_id', '=', target.userId)
          : query.where('sh.access_group_id', '=', target.accessGroupId);
      const row = await query.orderBy('sh.id').limit(1).executeTakeFirst();
      return row && toShare(row);
    },

    async findShareById(id: number): Promise<Share | undefined> {
      const row = await shares().select(shareColumns).where('sh.id', '=', id).executeTakeFirst();
      return row && toShare(row);
    },

    async insertShare(
      ownerId: number,
      type: SharedResourceType,
      resourceId: number,
      target: { userId: number } | { accessGroupId: number },
      now: number,
    ): Promise<Share> {
      const { id } = await db
        .insertInto('shares')
        .values({
          owner_id: ownerId,
          [COLUMN_OF[type]]: resourceId,
          user_id: 'userId' in target ? target.userId : null,
          access_group_id: 'accessGroupId' in target ? target.accessGroupId : null,
          create_time: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return (await this.findShareById(id))!;
    },

    async deleteShare(id: number): Promise<void> {
      await db.deleteFrom('shares').where('id', '=', id).execute();
    },

    /** Whether any share of the record is left (its `shared` flag). */
    async isShared(type: SharedResourceType, resourceId: number): Promise<boolean> {
      const row = await db
        .selectFrom('shares')
        .select('id')
        .where(COLUMN_OF[type], '=', resourceId)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** What is shared with the group (its `resources`). */
    async listGroupShares(
      groupId: number,
      query: ListQuery<keyof typeof SHARE_SQL.columns>,
    ): Promise<{ total: number; items: Share[] }> {
      const base = shares()
        .where('sh.access_group_id', '=', groupId)
        .where((eb) => eb.and(listConditions(dialect, query, SHARE_SQL)));
      const { total, rows } = await pageOf(base, (q) => q.select(shareColumns), query, SHARE_SQL);
      return { total, items: rows.map(toShare) };
    },
  };
}

function toGroup(row: {
  id: number;
  user_id: number;
  name: string;
  scope: string;
  create_time: number;
  user_email: string;
}): AccessGroup {
  return {
    id: Number(row.id),
    userId: Number(row.user_id),
    userEmail: row.user_email,
    name: row.name,
    scope: row.scope as AccessGroupScope,
    createTime: Number(row.create_time),
  };
}

function toMember(
  row: Pick<Selectable<Tables['users']>, 'id' | 'email' | 'first_name' | 'last_name'>,
): AccessGroupMember {
  return { id: Number(row.id), email: row.email, firstName: row.first_name, lastName: row.last_name };
}

function toShare(row: {
  id: number;
  owner_id: number;
  user_id: number | null;
  access_group_id: number | null;
  create_time: number;
  user_email: string | null;
  type: string;
  resource_id: number;
  name: string;
}): Share {
  return {
    id: Number(row.id),
    ownerId: Number(row.owner_id),
    type: row.type as SharedResourceType,
    resourceId: Number(row.resource_id),
    name: row.name,
    userId: row.user_id === null ? null : Number(row.user_id),
    userEmail: row.user_email,
    accessGroupId: row.access_group_id === null ? null : Number(row.access_group_id),
    createTime: Number(row.create_time),
  };
}
