/** Project configs (one row per project) and their key/value parameters. */
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { ConfigParameter, LimitationType, Mode, ProjectConfig, Scheduler } from '../domain/project-config.ts';
import type { ProjectConfigsTable, Tables } from './schema.ts';
import { flag } from './sql.ts';

export type ProjectConfigsStore = ReturnType<typeof projectConfigsStore>;

export function projectConfigsStore(db: Kysely<Tables>) {
  return {
    async insert(config: ProjectConfig): Promise<void> {
      await db.insertInto('project_configs').values(toRow(config)).execute();
    },

    async get(projectId: number): Promise<ProjectConfig | undefined> {
      const row = await db
        .selectFrom('project_configs')
        .selectAll()
        .where('project_id', '=', projectId)
        .executeTakeFirst();
      return row && toConfig(row);
    },

    async save(config: ProjectConfig): Promise<void> {
      const { project_id: _id, ...set } = toRow(config);
      await db.updateTable('project_configs').set(set).where('project_id', '=', config.projectId).execute();
    },

    async parameters(projectId: number): Promise<ConfigParameter[]> {
      const rows = await db
        .selectFrom('project_config_parameters')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute();
      return rows.map((row) => ({ id: row.id, projectId: row.project_id, key: row.key, value: row.value }));
    },

    async addParameter(projectId: number, key: string, value: string): Promise<ConfigParameter> {
      const row = await db
        .insertInto('project_config_parameters')
        .values({ project_id: projectId, key, value })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { id: row.id, projectId: row.project_id, key: row.key, value: row.value };
    },

    /** Returns whether a parameter of that project was removed. */
    async deleteParameter(projectId: number, id: number): Promise<boolean> {
      const result = await db
        .deleteFrom('project_config_parameters')
        .where('id', '=', id)
        .where('project_id', '=', projectId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

function toRow(config: ProjectConfig): Insertable<ProjectConfigsTable> {
  return {
    project_id: config.projectId,
    mode: config.mode,
    used_device_group_id: config.usedDeviceGroupId,
    scheduler: config.scheduler,
    timeout: config.timeout,
    device_language_code: config.deviceLanguageCode,
    hook_url: config.hookURL,
    instrumentation_runner: config.instrumentationRunner,
    limitation_type: config.limitationType,
    limitation_value: config.limitationValue,
    with_annotation: config.withAnnotation,
    without_annotation: config.withoutAnnotation,
    application_username: config.applicationUsername,
    application_password: config.applicationPassword,
    auto_screenshots: flag(config.autoScreenshots),
    screenshot_dir: config.screenshotDir,
    launch_app: flag(config.launchApp),
    video_recording_enabled: flag(config.videoRecordingEnabled),
    max_auto_retries_count: config.maxAutoRetriesCount,
  };
}

function toConfig(row: Selectable<ProjectConfigsTable>): ProjectConfig {
  return {
    projectId: row.project_id,
    mode: row.mode as Mode,
    usedDeviceGroupId: row.used_device_group_id,
    scheduler: row.scheduler as Scheduler,
    timeout: row.timeout,
    deviceLanguageCode: row.device_language_code,
    hookURL: row.hook_url,
    instrumentationRunner: row.instrumentation_runner,
    limitationType: row.limitation_type as LimitationType | null,
    limitationValue: row.limitation_value,
    withAnnotation: row.with_annotation,
    withoutAnnotation: row.without_annotation,
    applicationUsername: row.application_username,
    applicationPassword: row.application_password,
    autoScreenshots: row.auto_screenshots === 1,
    screenshotDir: row.screenshot_dir,
    launchApp: row.launch_app === 1,
    videoRecordingEnabled: row.video_recording_enabled === 1,
    maxAutoRetriesCount: row.max_auto_retries_count,
  };
}
