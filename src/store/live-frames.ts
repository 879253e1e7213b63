/**
 * The newest frame of each interactive session's screen (migration 023): the agent's push
 * replaces it, viewers on any server read it when woken.
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

    /** A session's frames are of no use once it ended. */
    async remove(deviceRunId: number): Promise<void> {
      await db.deleteFrom('live_frames').where('device_run_id', '=', deviceRunId).execute();
    },
  };
}
