/** Uploaded (INPUT) and produced (OUTPUT) files; their bytes live in the blob store. */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { FILE_LIST, FileDirection, FileInputType, FileState, ProjectFileSlot, UserFile } from '../domain/files.ts';
import type { ListQuery } from '../domain/list-query.ts';
import type { Dialect } from './db.ts';
import type { FilesTable, Tables } from './schema.ts';
import { type ListSql, flag, inIds, listConditions, pageOf } from './sql.ts';

type FileField = keyof (typeof FILE_LIST)['fields'];

/**
 * The listing's fields as SQL, seen from the caller as the presenter shows them: the owner's
 * e-mail only to the owner, and a file not the caller's is one shared with them.
 */
function listSql(userId: number): ListSql<FileField> {
  return {
    columns: {
      id: 'id',
      name: 'name',
      size: 'size',
      createTime: 'create_time',
      state: 'state',
      direction: 'direction',
      inputType: 'input_type',
      mimetype: 'mimetype',
      userId: 'user_id',
      duplicate: 'duplicate',
      userEmail: sql`(CASE WHEN files.user_id = ${userId} THEN (SELECT u.email FROM users u WHERE u.id = files.user_id) END)`,
      shared: sql`(CASE WHEN files.user_id <> ${userId} THEN 1 ELSE 0 END)`,
    },
    searchColumns: ['name'],
    tieBreaker: 'id',
  };
}

/** A file to insert: a UserFile without its id; project and device run are optional. */
export type NewFile = Omit<UserFile, 'id' | 'projectId' | 'projectSlot' | 'deviceRunId'> &
  Partial<Pick<UserFile, 'projectId' | 'projectSlot' | 'deviceRunId'>>;

export type FilesStore = ReturnType<typeof filesStore>;

export function filesStore(db: Kysely<Tables>, dialect: Dialect) {
  return {
    async insert(file: NewFile): Promise<UserFile> {
      const row = await db
        .insertInto('files')
        .values({
          user_id: file.userId,
          project_id: file.projectId ?? null,
          project_slot: file.projectSlot ?? null,
          device_run_id: file.deviceRunId ?? null,
          name: file.name,
          size: file.size,
          mimetype: file.mimetype,
          sha256: file.sha256,
          blob_key: file.blobKey,
          state: file.state,
          direction: file.direction,
          input_type: file.inputType,
          os_type: file.osType,
          duplicate: flag(file.duplicate),
          properties_json: JSON.stringify(file.properties),
          tags: file.tags.join(','),
          create_time: file.createTime,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toFile(row);
    },

    async findOwned(userId: number, id: number): Promise<UserFile | undefined> {
      const row = await db
        .selectFrom('files')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row && toFile(row);
    },

    async ownedByIds(userId: number, ids: readonly number[]): Promise<Map<number, UserFile>> {
      if (ids.length === 0) return new Map();
      const rows = await db
        .selectFrom('files')
        .selectAll()
        .where('user_id', '=', userId)
        .where(inIds(dialect, 'id', ids))
        .execute();
      return new Map(rows.map((row) => [row.id, toFile(row)]));
    },

    async byIds(ids: readonly number[]): Promise<Map<number, UserFile>> {
      if (ids.length === 0) return new Map();
      const rows = await db
        .selectFrom('files')
        .selectAll()
        .where(inIds(dialect, 'id', ids))
        .execute();
      return new Map(rows.map((row) => [row.id, toFile(row)]));
    },

    /** Whether this user stored these bytes before (the `duplicate` flag). */
    async userHasSha(userId: number, sha256: string): Promise<boolean> {
      const row = await db
        .selectFrom('files')
        .select('id')
        .where('user_id', '=', userId)
        .where('sha256', '=', sha256)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    async list(userId: number, query: ListQuery<FileField>): Promise<{ total: number; items: UserFile[] }> {
      const spec = listSql(userId);
      const base = db
        .selectFrom('files')
        .where('user_id', '=', userId)
        .where('device_run_id', 'is', null)
        .where((eb) => eb.and(listConditions(dialect, query, spec)));
      const { total, rows } = await pageOf(base, (q) => q.selectAll(), query, spec);
      return { total, items: rows.map(toFile) };
    },

    /** The newest file of a legacy project slot. */
    async latestOfProject(projectId: number, slot: ProjectFileSlot): Promise<UserFile | undefined> {
      const row = await db
        .selectFrom('files')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('project_slot', '=', slot)
        .orderBy('create_time', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row && toFile(row);
    },

    /** Output files of a device run, optionally only those carrying one of `tags`. */
    async outputsOf(deviceRunId: number, tags: readonly string[] = []): Promise<UserFile[]> {
      const rows = await db
        .selectFrom('files')
        .selectAll()
        .where('device_run_id', '=', deviceRunId)
        .orderBy('id')
        .execute();
      const files = rows.map(toFile);
      return tags.length === 0 ? files : files.filter((file) => file.tags.some((tag) => tags.includes(tag)));
    },

    /** Output files of several device runs in one statement, by device run then as stored. */
    async outputsOfMany(deviceRunIds: readonly number[], tags: readonly string[] = []): Promise<UserFile[]> {
      if (deviceRunIds.length === 0) return [];
      const rows = await db
        .selectFrom('files')
        .selectAll()
        .where(inIds(dialect, 'device_run_id', deviceRunIds))
        .orderBy('device_run_id')
        .orderBy('id')
        .execute();
      const files = rows.map(toFile);
      return tags.length === 0 ? files : files.filter((file) => file.tags.some((tag) => tags.includes(tag)));
    },

    /** The video of each of these device runs that has one (docs/api.md#videos): device run id → file id. */
    async videosOf(deviceRunIds: readonly number[]): Promise<Map<number, number>> {
      if (deviceRunIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('files')
        .select(['id', 'device_run_id'])
        .where(inIds(dialect, 'device_run_id', deviceRunIds))
        .where('mimetype', 'like', 'video/%')
        .orderBy('id')
        .execute();
      return new Map(rows.map((row) => [Number(row.device_run_id), Number(row.id)]));
    },

    async findOutput(deviceRunId: number, id: number): Promise<UserFile | undefined> {
      const row = await db
        .selectFrom('files')
        .selectAll()
        .where('id', '=', id)
        .where('device_run_id', '=', deviceRunId)
        .executeTakeFirst();
      return row && toFile(row);
    },

    /** An artifact re-sent by an agent replaces the earlier copy of the same name. */
    async deleteOutputNamed(deviceRunId: number, name: string): Promise<string[]> {
      const rows = await db
        .deleteFrom('files')
        .where('device_run_id', '=', deviceRunId)
        .where('name', '=', name)
        .returning('blob_key')
        .execute();
      return rows.map((row) => row.blob_key);
    },

    async rename(id: number, name: string): Promise<void> {
      await db.updateTable('files').set({ name }).where('id', '=', id).execute();
    },

    /**
     * The tags of each device run's output files, for those of `deviceRunIds` that have any: one
     * row per distinct (device run, tags), so a session with a thousand screenshots is one row.
     */
    async outputTagsOf(deviceRunIds: readonly number[]): Promise<Map<number, Set<string>>> {
      const tags = new Map<number, Set<string>>();
      if (deviceRunIds.length === 0) return tags;
      const rows = await db
        .selectFrom('files')
        .select(['device_run_id', 'tags'])
        .distinct()
        .where(inIds(dialect, 'device_run_id', deviceRunIds))
        .execute();
      for (const row of rows) {
        const set = tags.get(row.device_run_id!) ?? new Set<string>();
        for (const tag of row.tags.split(',')) if (tag !== '') set.add(tag);
        tags.set(row.device_run_id!, set);
      }
      return tags;
    },

    async delete(id: number): Promise<void> {
      await db.deleteFrom('files').where('id', '=', id).execute();
    },

    async blobInUse(blobKey: string): Promise<boolean> {
      const row = await db.selectFrom('files').select('id').where('blob_key', '=', blobKey).limit(1).executeTakeFirst();
      return row !== undefined;
    },
  };
}

function toFile(row: Selectable<FilesTable>): UserFile {
  return {
    id: row.id,
    userId: row.user_id,
    projectId: row.project_id,
    projectSlot: row.project_slot as ProjectFileSlot | null,
    deviceRunId: row.device_run_id,
    name: row.name,
    size: row.size,
    mimetype: row.mimetype,
    sha256: row.sha256,
    blobKey: row.blob_key,
    state: row.state as FileState,
    direction: row.direction as FileDirection,
    inputType: row.input_type as FileInputType | null,
    osType: row.os_type as 'ANDROID' | 'IOS' | null,
    duplicate: row.duplicate === 1,
    properties: JSON.parse(row.properties_json) as Record<string, string>,
    tags: row.tags === '' ? [] : row.tags.split(','),
    createTime: row.create_time,
  };
}
