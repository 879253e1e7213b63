/** Users, projects and their configs, devices and groups, test runs and device runs. */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('organization', 'text')
    .addColumn('country', 'text')
    .addColumn('time_zone', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('api_key', 'text', (c) => c.notNull())
    .addColumn('api_key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .addColumn('last_login_time', t.timestamp)
    .addColumn('last_launched_test_time', t.timestamp)
    .execute();

  await db.schema
    .createTable('projects')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('user_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('os_type', 'text', (c) => c.notNull())
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .addColumn('archive_time', t.timestamp)
    .addColumn('archiving_strategy', 'text', (c) => c.notNull())
    .addColumn('archiving_item_count', 'integer', (c) => c.notNull())
    .addColumn('common', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('shared', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('projects_user_time').on('projects').columns(['user_id', 'create_time']).execute();

  await db.schema
    .createTable('devices')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('manufacturer', 'text', (c) => c.notNull())
    .addColumn('os_type', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('release_version', 'text', (c) => c.notNull())
    .addColumn('api_level', 'integer')
    .addColumn('credits_price', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('online', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('device_groups')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('user_id', t.id, (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('os_type', 'text', (c) => c.notNull())
    .addColumn('shared', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('device_groups_user').on('device_groups').column('user_id').execute();

  await db.schema
    .createTable('device_group_devices')
    .addColumn('group_id', t.id, (c) => c.notNull().references('device_groups.id').onDelete('cascade'))
    .addColumn('device_id', t.id, (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('device_group_devices_pk', ['group_id', 'device_id'])
    .execute();

  await db.schema
    .createTable('project_configs')
    .addColumn('project_id', t.id, (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('used_device_group_id', t.id, (c) => c.references('device_groups.id').onDelete('set null'))
    .addColumn('scheduler', 'text', (c) => c.notNull())
    .addColumn('timeout', 'integer', (c) => c.notNull())
    .addColumn('device_language_code', 'text', (c) => c.notNull())
    .addColumn('hook_url', 'text')
    .addColumn('instrumentation_runner', 'text')
    .addColumn('limitation_type', 'text')
    .addColumn('limitation_value', 'text')
    .addColumn('with_annotation', 'text')
    .addColumn('without_annotation', 'text')
    .addColumn('application_username', 'text')
    .addColumn('application_password', 'text')
    .addColumn('auto_screenshots', 'integer', (c) => c.notNull())
    .addColumn('screenshot_dir', 'text', (c) => c.notNull())
    .addColumn('launch_app', 'integer', (c) => c.notNull())
    .addColumn('video_recording_enabled', 'integer', (c) => c.notNull())
    .addColumn('max_auto_retries_count', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('project_config_parameters')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('project_id', t.id, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('project_config_parameters_project')
    .on('project_config_parameters')
    .column('project_id')
    .execute();

  await db.schema
    .createTable('test_runs')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('project_id', t.id, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('user_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('os_type', 'text', (c) => c.notNull())
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .addColumn('start_time', t.timestamp)
    .addColumn('end_time', t.timestamp)
    .addColumn('config_json', 'text', (c) => c.notNull())
    .addColumn('framework_id', t.id)
    .addColumn('started_by_id', t.id, (c) => c.notNull())
    .addUniqueConstraint('test_runs_project_number', ['project_id', 'number'])
    .execute();
  await db.schema
    .createIndex('test_runs_project_time')
    .on('test_runs')
    .columns(['project_id', 'create_time'])
    .execute();
  await db.schema.createIndex('test_runs_user').on('test_runs').column('user_id').execute();

  await db.schema
    .createTable('device_runs')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('test_run_id', t.id, (c) => c.notNull().references('test_runs.id').onDelete('cascade'))
    .addColumn('project_id', t.id, (c) => c.notNull())
    .addColumn('user_id', t.id, (c) => c.notNull())
    .addColumn('device_id', t.id, (c) => c.notNull().references('devices.id'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('exclude_reason', 'text')
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .addColumn('install_time', t.timestamp)
    .addColumn('start_time', t.timestamp)
    .addColumn('end_time', t.timestamp)
    .addColumn('time_limit', 'integer', (c) => c.notNull())
    .addColumn('test_case_all_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('test_case_passed_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('test_case_failed_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('test_case_skipped_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retry_state', 'text', (c) => c.notNull())
    .addColumn('auto_retries_left_count', 'integer', (c) => c.notNull())
    .addColumn('current_step', 'text')
    .addColumn('current_step_start_time', t.timestamp)
    .execute();
  await db.schema.createIndex('device_runs_test_run').on('device_runs').columns(['test_run_id', 'state']).execute();
  await db.schema.createIndex('device_runs_project').on('device_runs').columns(['project_id', 'state']).execute();
  await db.schema.createIndex('device_runs_device_state').on('device_runs').columns(['device_id', 'state']).execute();

  await db.schema
    .createTable('device_run_steps')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('device_run_id', t.id, (c) => c.notNull().references('device_runs.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('start_time', t.timestamp, (c) => c.notNull())
    .addColumn('finish_time', t.timestamp)
    .addColumn('fail_reason', 'text')
    .execute();
  await db.schema.createIndex('device_run_steps_run').on('device_run_steps').column('device_run_id').execute();
}
