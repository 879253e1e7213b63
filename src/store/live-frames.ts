/**
 * The newest frame of each interactive session's screen, and its device's log (migration 023):
 * the agent pushes them, viewers on any server read them when woken.
 */
import type { Kysely } from 'kysely';
import type { Tables } from './schema.ts';

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

    /** A session's frames are of no use once it ended. */
    async remove(deviceRunId: number): Promise<void> {
      await db.deleteFrom('live_frames').where('device_run_id', '=', deviceRunId).execute();
    },
  };
}
