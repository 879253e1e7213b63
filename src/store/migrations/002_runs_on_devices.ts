/**
 * Running tests on devices: agents and their devices, uploaded and produced files, the queue's
 * columns on device runs, results (test cases, performance samples) and hook deliveries.
 */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('agents')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('hostname', 'text')
    .addColumn('version', 'text')
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .addColumn('last_seen_time', t.timestamp)
    .execute();

  await db.schema.alterTable('devices').addColumn('serial', 'text').execute();
  await db.schema
    .alterTable('devices')
    .addColumn('agent_id', t.id, (c) => c.references('agents.id').onDelete('set null'))
    .execute();
  await db.schema
    .alterTable('devices')
    .addColumn('execution_kinds', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.alterTable('devices').addColumn('last_seen_time', t.timestamp).execute();
  await db.schema
    .alterTable('devices')
    .addColumn('infra_failure_streak', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('devices').addColumn('state_reason', 'text').execute();
  await db.schema.createIndex('devices_serial').on('devices').column('serial').unique().execute();
  await db.schema.createIndex('devices_agent').on('devices').column('agent_id').execute();

  await db.schema
    .createTable('files')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('user_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', t.id, (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('project_slot', 'text')
    .addColumn('device_run_id', t.id, (c) => c.references('device_runs.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('size', t.timestamp, (c) => c.notNull())
    .addColumn('mimetype', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('input_type', 'text')
    .addColumn('os_type', 'text')
    .addColumn('duplicate', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('properties_json', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('files_user_time').on('files').columns(['user_id', 'create_time']).execute();
  await db.schema.createIndex('files_user_sha').on('files').columns(['user_id', 'sha256']).execute();
  await db.schema.createIndex('files_device_run').on('files').column('device_run_id').execute();
  await db.schema.createIndex('files_project_slot').on('files').columns(['project_id', 'project_slot']).execute();
  await db.schema.createIndex('files_blob').on('files').column('blob_key').execute();

  await db.schema
    .alterTable('test_runs')
    .addColumn('scheduler', 'text', (c) => c.notNull().defaultTo('PARALLEL'))
    .execute();
  await db.schema.alterTable('test_runs').addColumn('hook_url', 'text').execute();

  const deviceRuns = () => db.schema.alterTable('device_runs');
  // Owner's plan priority, copied so that the queue is one index scan (set-plan updates waiting runs).
  await deviceRuns()
    .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await deviceRuns().addColumn('agent_id', t.id).execute();
  await deviceRuns().addColumn('lease_expires_time', t.timestamp).execute();
  await deviceRuns()
    .addColumn('last_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // A retried device run stays listed but no longer counts in its run's figures.
  await deviceRuns()
    .addColumn('superseded', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await deviceRuns().addColumn('retried_from_id', t.id).execute();
  // SERIAL runs use one device at a time; SINGLE runs use the first device that is free.
  await deviceRuns().addColumn('serial_group', t.id).execute();
  await deviceRuns().addColumn('single_group', t.id).execute();
  await deviceRuns().addColumn('fail_reason', 'text').execute();
  await deviceRuns().addColumn('framework_kind', 'text').execute();
  await db.schema
    .createIndex('device_runs_queue')
    .on('device_runs')
    .columns(['device_id', 'state', 'priority desc', 'create_time', 'id'])
    .execute();
  await db.schema.createIndex('device_runs_lease').on('device_runs').columns(['state', 'lease_expires_time']).execute();

  await db.schema
    .createTable('test_case_runs')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('device_run_id', t.id, (c) => c.notNull().references('device_runs.id').onDelete('cascade'))
    .addColumn('suite_name', 'text')
    .addColumn('class_name', 'text', (c) => c.notNull())
    .addColumn('method_name', 'text', (c) => c.notNull())
    .addColumn('duration', 'integer', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('error_message', 'text')
    .addColumn('stacktrace', 'text')
    .execute();
  await db.schema.createIndex('test_case_runs_run').on('test_case_runs').column('device_run_id').execute();

  await db.schema
    .createTable('performance_samples')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('device_run_id', t.id, (c) => c.notNull().references('device_runs.id').onDelete('cascade'))
    .addColumn('timestamp', t.timestamp, (c) => c.notNull())
    .addColumn('cpu_usage', 'real', (c) => c.notNull())
    .addColumn('mem_usage', 'integer', (c) => c.notNull())
    .addColumn('package_name', 'text')
    .execute();
  await db.schema
    .createIndex('performance_samples_run')
    .on('performance_samples')
    .columns(['device_run_id', 'timestamp'])
    .execute();

  await db.schema
    .createTable('hook_deliveries')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('test_run_id', t.id, (c) => c.notNull().references('test_runs.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_time', t.timestamp, (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('hook_deliveries_due')
    .on('hook_deliveries')
    .columns(['status', 'next_attempt_time'])
    .execute();
}
