/** Recorder authorizations (by the SHA-256 of their token), recordings and their steps. */
import type { Kysely } from 'kysely';
import type { ListQuery } from '../domain/list-query.ts';
import { type RECORDING_LIST, UNAUTHORIZED_STEP_LIMIT } from '../domain/recordings.ts';
import type {
  NewStep,
  RecorderAuthorization,
  Recording,
  RecordingState,
  RecordingStep,
  StepAction,
} from '../domain/recordings.ts';
import type { Dialect } from './db.ts';
import type { Tables } from './schema.ts';
import { type ListSql, listConditions, pageOf } from './sql.ts';

type RecordingField = keyof (typeof RECORDING_LIST)['fields'];

/**
 * Whether the recording was made under its owner's current recorder authorization (the one not
 * ended), as services/recordings.ts decides it for the records it shows.
 */
const AUTHORIZED = `(CASE WHEN EXISTS (SELECT 1 FROM recorder_authorizations a
  WHERE a.id = r.authorization_id AND a.user_id = r.user_id AND a.end_time IS NULL) THEN 1 ELSE 0 END)`;

const LIST_SQL: ListSql<RecordingField> = {
  columns: {
    id: 'r.id',
    name: 'r.name',
    state: 'r.state',
    createTime: 'r.create_time',
    osType: 'r.os_type',
    stepCount: 'r.step_count',
    endTime: 'r.end_time',
    authorized: AUTHORIZED,
    stepLimit: `(CASE WHEN ${AUTHORIZED} = 1 THEN NULL ELSE ${UNAUTHORIZED_STEP_LIMIT} END)`,
  },
  searchColumns: ['r.name'],
  tieBreaker: 'r.id',
};

export type RecordingsStore = ReturnType<typeof recordingsStore>;

export function recordingsStore(db: Kysely<Tables>, dialect: Dialect) {
  return {
    async currentAuthorization(userId: number): Promise<RecorderAuthorization | undefined> {
      const row = await db
        .selectFrom('recorder_authorizations')
        .selectAll()
        .where('user_id', '=', userId)
        .where('end_time', 'is', null)
        .executeTakeFirst();
      return row && toAuthorization(row);
    },

    async authorizationByTokenHash(hash: string): Promise<RecorderAuthorization | undefined> {
      const row = await db
        .selectFrom('recorder_authorizations')
        .selectAll()
        .where('token_hash', '=', hash)
        .executeTakeFirst();
      return row && toAuthorization(row);
    },

    async endAuthorizations(userId: number, now: number): Promise<number> {
      const rows = await db
        .updateTable('recorder_authorizations')
        .set({ end_time: now })
        .where('user_id', '=', userId)
        .where('end_time', 'is', null)
        .returning('id')
        .execute();
      return rows.length;
    },

    async insertAuthorization(userId: number, tokenHash: string, now: number): Promise<RecorderAuthorization> {
      const row = await db
        .insertInto('recorder_authorizations')
        .values({ user_id: userId, token_hash: tokenHash, create_time: now, end_time: null })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toAuthorization(row);
    },

    async insertRecording(
      recording: Pick<Recording, 'userId' | 'name' | 'osType' | 'authorizationId' | 'createTime'>,
    ): Promise<Recording> {
      const row = await db
        .insertInto('recordings')
        .values({
          user_id: recording.userId,
          name: recording.name,
          os_type: recording.osType,
          authorization_id: recording.authorizationId,
          state: 'RECORDING',
          create_time: recording.createTime,
          end_time: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRecording(row);
    },

    async findOwned(userId: number, id: number): Promise<Recording | undefined> {
      const row = await db
        .selectFrom('recordings')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row && toRecording(row);
    },

    /** The recording, locked until the transaction ends (PostgreSQL), so steps are numbered one at a time. */
    async findOwnedForUpdate(userId: number, id: number): Promise<Recording | undefined> {
      let query = db.selectFrom('recordings').selectAll().where('id', '=', id).where('user_id', '=', userId);
      if (dialect === 'postgres') query = query.forUpdate();
      const row = await query.executeTakeFirst();
      return row && toRecording(row);
    },

    async list(userId: number, query: ListQuery<RecordingField>): Promise<{ total: number; items: Recording[] }> {
      const base = db
        .selectFrom('recordings as r')
        .where('r.user_id', '=', userId)
        .where((eb) => eb.and(listConditions(dialect, query, LIST_SQL)));
      const { total, rows } = await pageOf(base, (q) => q.selectAll('r'), query, LIST_SQL);
      return { total, items: rows.map(toRecording) };
    },

    async appendStep(recording: Recording, step: NewStep, now: number): Promise<RecordingStep> {
      const position = recording.stepCount + 1;
      await db
        .insertInto('recording_steps')
        .values({
          recording_id: recording.id,
          position,
          action: step.action,
          target: step.target,
          value: step.value,
          time: now,
        })
        .execute();
      await db.updateTable('recordings').set({ step_count: position }).where('id', '=', recording.id).execute();
      return { ...step, position, time: now };
    },

    async steps(recordingId: number): Promise<RecordingStep[]> {
      const rows = await db
        .selectFrom('recording_steps')
        .selectAll()
        .where('recording_id', '=', recordingId)
        .orderBy('position')
        .execute();
      return rows.map((row) => ({
        position: row.position,
        action: row.action as StepAction,
        target: row.target,
        value: row.value,
        time: row.time,
      }));
    },

    async end(recordingId: number, state: Exclude<RecordingState, 'RECORDING'>, now: number): Promise<void> {
      await db
        .updateTable('recordings')
        .set({ state, end_time: now })
        .where('id', '=', recordingId)
        .where('state', '=', 'RECORDING')
        .execute();
    },
  };
}

function toAuthorization(row: {
  id: number;
  user_id: number;
  create_time: number;
  end_time: number | null;
}): RecorderAuthorization {
  return {
    id: row.id,
    userId: row.user_id,
    createTime: Number(row.create_time),
    endTime: row.end_time === null ? null : Number(row.end_time),
  };
}

function toRecording(row: {
  id: number;
  user_id: number;
  name: string;
  os_type: string | null;
  authorization_id: number | null;
  state: string;
  step_count: number;
  create_time: number;
  end_time: number | null;
}): Recording {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    osType: row.os_type as Recording['osType'],
    authorizationId: row.authorization_id,
    state: row.state as RecordingState,
    stepCount: row.step_count,
    createTime: Number(row.create_time),
    endTime: row.end_time === null ? null : Number(row.end_time),
  };
}
