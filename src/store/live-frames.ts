/**
 * The newest frame of each interactive session's screen, and its device's log (migration 023):
 * the agent pushes them, viewers on any server read them when woken.
 */
import { type Kysely, sql } from 'kysely';
import type { DeviceScreen } from '../domain/interactive.ts';
import { isCurrentDeviceRun } from './current-device-runs.ts';
import type { Tables } from './schema.ts';
import { sharedWith } from './sharing.ts';

export interface LiveFrame {
  readonly deviceRunId: number;
  readonly seq: number;
  readonly mediaType: string;
  readonly bytes: Buffer;
  readonly frameTime: number;
  readonly storeTime: number;
}

export function liveFramesStore(db: Kysely<Tables>) {
  return {
    /** Keeps `bytes` as the session's newest frame; answers its number. */
    async put(deviceRunId: number, mediaType: string, bytes: Buffer, frameTime: number, now: number): Promise<number> {
      const data = bytes.toString('base64');
      const updated = await db
        .updateTable('live_frames')
        .set((eb) => ({
          seq: eb('seq', '+', 1),
          media_type: mediaType,
          data,
          frame_time: frameTime,
          store_time: now,
        }))
        .where('device_run_id', '=', deviceRunId)
        .returning('seq')
        .executeTakeFirst();
      if (updated !== undefined) return Number(updated.seq);
      await db
        .insertInto('live_frames')
        .values({
          device_run_id: deviceRunId,
          seq: 1,
          media_type: mediaType,
          data,
          frame_time: frameTime,
          store_time: now,
        })
        .onConflict((oc) =>
          oc
            .column('device_run_id')
            .doUpdateSet({ media_type: mediaType, data, frame_time: frameTime, store_time: now }),
        )
        .execute();
      return 1;
    },

    /** The newest frame, when it is newer than `afterSeq`. */
    async newest(deviceRunId: number, afterSeq = 0): Promise<LiveFrame | undefined> {
      const row = await db
        .selectFrom('live_frames')
        .selectAll()
        .where('device_run_id', '=', deviceRunId)
        .where('seq', '>', afterSeq)
        .executeTakeFirst();
      return (
        row && {
          deviceRunId: Number(row.device_run_id),
          seq: Number(row.seq),
          mediaType: row.media_type,
          bytes: Buffer.from(row.data, 'base64'),
          frameTime: Number(row.frame_time),
          storeTime: Number(row.store_time),
        }
      );
    },

    /**
     * The running sessions `userId` may see, one per busy device: their own, and the automatic
     * ones of projects shared with them (an interactive session is its holder's alone, as in
     * services/interactive.ts). One statement, whatever the number of devices.
     */
    async screensFor(userId: number): Promise<DeviceScreen[]> {
      const rows = await db
        .selectFrom('device_runs as dr')
        .leftJoin('live_frames as f', 'f.device_run_id', 'dr.id')
        .select((eb) => [
          'dr.id',
          'dr.device_id',
          'dr.framework_kind',
          'f.seq',
          'f.frame_time',
          eb
            .selectFrom('files as file')
            .select((inner) => inner.fn.max('file.id').as('id'))
            .whereRef('file.device_run_id', '=', 'dr.id')
            .where(sql<boolean>`',' || file.tags || ',' LIKE '%,screenshot,%'`)
            .as('screenshot_id'),
        ])
        .where('dr.state', '=', 'RUNNING')
        .where(isCurrentDeviceRun('dr'))
        .where((eb) =>
          eb.or([
            eb('dr.user_id', '=', userId),
            eb.and([
              eb('dr.project_id', 'in', sharedWith(db, 'project_id', userId)),
              eb.or([eb('dr.framework_kind', 'is', null), eb('dr.framework_kind', '!=', 'interactive')]),
            ]),
          ]),
        )
        .orderBy('dr.device_id')
        .orderBy('dr.id')
        .execute();
      return rows.map((row) => ({
        deviceId: Number(row.device_id),
        deviceRunId: Number(row.id),
        interactive: row.framework_kind === 'interactive',
        frame: row.seq === null ? null : { seq: Number(row.seq), frameTime: Number(row.frame_time) },
        screenshotFileId: row.screenshot_id === null ? null : Number(row.screenshot_id),
      }));
    },

    /** Lines of the device's log, in the order the agent read them. */
    async appendLines(deviceRunId: number, lines: readonly string[]): Promise<void> {
      if (lines.length === 0) return;
      await db
        .insertInto('live_log_lines')
        .values(lines.map((line) => ({ device_run_id: deviceRunId, line })))
        .execute();
    },

    /** The lines after `afterId`, oldest first, with the id of the last. */
    async linesAfter(deviceRunId: number, afterId: number, limit = 500): Promise<{ lines: string[]; lastId: number }> {
      const rows = await db
        .selectFrom('live_log_lines')
        .select(['id', 'line'])
        .where('device_run_id', '=', deviceRunId)
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .execute();
      return { lines: rows.map((row) => row.line), lastId: rows.length === 0 ? afterId : Number(rows.at(-1)!.id) };
    },

    /**
     * The frames of sessions that ended before `endedBefore`, at most `limit` of them (the
     * retention job): a frame is for watching, and nobody watches an ended session. Answers the
     * sessions whose frame went.
     */
    async removeEndedFrames(endedBefore: number, limit: number): Promise<number[]> {
      const rows = await db
        .deleteFrom('live_frames')
        .where('device_run_id', 'in', (eb) =>
          eb
            .selectFrom('live_frames as f')
            .innerJoin('device_runs as dr', 'dr.id', 'f.device_run_id')
            .select('f.device_run_id')
            .where('dr.end_time', '<', endedBefore)
            .limit(limit),
        )
        .returning('device_run_id')
        .execute();
      return rows.map((row) => Number(row.device_run_id));
    },

    /**
     * The log lines of sessions that ended before `endedBefore`, at most `limit` lines (the
     * retention job). Answers how many went.
     */
    async removeEndedLines(endedBefore: number, limit: number): Promise<number> {
      const due = db
        .selectFrom('live_log_lines as l')
        .innerJoin('device_runs as dr', 'dr.id', 'l.device_run_id')
        .select('l.id')
        .where('dr.end_time', '<', endedBefore)
        .limit(limit);
      const removed = await db.deleteFrom('live_log_lines').where('id', 'in', due).executeTakeFirst();
      return Number(removed.numDeletedRows);
    },
  };
}
