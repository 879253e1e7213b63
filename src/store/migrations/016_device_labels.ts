/**
 * Labels (docs/api.md#device-selection): the fixed label groups, the labels devices carry, and the
 * labels a device group selects devices by. The devices already known get their labels from what
 * their hosts last reported.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../schema.ts';
import { syncDeviceLabels } from '../labels.ts';
import type { ColumnTypes } from './column-types.ts';

/** The groups of domain/labels.ts#LABEL_GROUPS as they were when this step was written. */
const GROUPS = [
  [1, 'android-version', 'Android version', 0, 'ANDROID'],
  [2, 'ios-version', 'iOS version', 0, 'IOS'],
  [3, 'api-level', 'API level', 1, 'ANDROID'],
  [4, 'manufacturer', 'Manufacturer', 0, null],
  [5, 'form-factor', 'Form factor', 0, null],
  [6, 'platform', 'Platform', 0, null],
] as const;

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('label_groups')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('hidden_by_default', 'integer', (c) => c.notNull())
    .addColumn('os_type', 'text')
    .execute();
  await db.schema
    .createTable('labels')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('group_id', t.id, (c) => c.notNull().references('label_groups.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addUniqueConstraint('labels_group_name', ['group_id', 'name'])
    .execute();
  await db.schema
    .createTable('device_labels')
    .addColumn('device_id', t.id, (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('label_id', t.id, (c) => c.notNull().references('labels.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('device_labels_pk', ['device_id', 'label_id'])
    .execute();
  await db.schema.createIndex('device_labels_label').on('device_labels').columns(['label_id', 'device_id']).execute();
  await db.schema
    .createTable('device_group_selectors')
    .addColumn('group_id', t.id, (c) => c.notNull().references('device_groups.id').onDelete('cascade'))
    .addColumn('label_id', t.id, (c) => c.notNull().references('labels.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('device_group_selectors_pk', ['group_id', 'label_id'])
    .execute();

  const tables = db as unknown as Kysely<Tables>;
  await tables
    .insertInto('label_groups')
    .values(
      GROUPS.map(([id, name, displayName, hidden, osType]) => ({
        id,
        name,
        display_name: displayName,
        hidden_by_default: hidden,
        os_type: osType,
      })),
    )
    .execute();
  const devices = await tables.selectFrom('devices').selectAll().orderBy('id').execute();
  for (const device of devices) {
    await syncDeviceLabels(tables, device.id, {
      displayName: device.display_name,
      manufacturer: device.manufacturer,
      osType: device.os_type as 'ANDROID' | 'IOS',
      platform: device.platform,
      releaseVersion: device.release_version,
      apiLevel: device.api_level,
    });
  }
}
