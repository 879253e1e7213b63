/**
 * Table types as Kysely sees them. Both engines store the same shapes: integers for ids and epoch
 * millisecond timestamps (bigint on PostgreSQL, parsed back to numbers), 0/1 for booleans, text for
 * enums and JSON documents.
 */
import type { Generated } from 'kysely';

type Flag = number;

export interface UsersTable {
  id: Generated<number>;
  email: string;
  password_hash: string;
  first_name: string;
  last_name: string;
  organization: string | null;
  country: string | null;
  time_zone: string | null;
  /** Contact fields of the established API's user record (migration 012), all optional. */
  address: string | null;
  city: string | null;
  /** Postal code. */
  code: string | null;
  state: string | null;
  phone: string | null;
  vat_id: string | null;
  status: string;
  role: string;
  plan: string;
  /** SHA-256 of the key, for lookup (keys are random: no salt needed). */
  api_key_hash: string;
  /** The key, AES-256-GCM sealed with a key kept outside the database (services/secret-box.ts). */
  api_key_sealed: string | null;
  /** Which key sealed it (rotation re-seals the rows of older keys). */
  api_key_key_id: string | null;
  create_time: number;
  last_login_time: number | null;
  last_launched_test_time: number | null;
}

export interface ProjectsTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  description: string | null;
  type: string;
  os_type: string;
  create_time: number;
  archive_time: number | null;
  /** When the user last unarchived it (migration 021): an unused project's clock restarts then. */
  unarchive_time: number | null;
  archiving_strategy: string;
  archiving_item_count: number;
  common: Flag;
  shared: Flag;
  read_only: Flag;
}

export interface ProjectConfigsTable {
  project_id: number;
  mode: string;
  used_device_group_id: number | null;
  scheduler: string;
  timeout: number;
  device_language_code: string;
  hook_url: string | null;
  instrumentation_runner: string | null;
  limitation_type: string | null;
  limitation_value: string | null;
  with_annotation: string | null;
  without_annotation: string | null;
  application_username: string | null;
  application_password: string | null;
  auto_screenshots: Flag;
  screenshot_dir: string;
  launch_app: Flag;
  video_recording_enabled: Flag;
  max_auto_retries_count: number;
}

export interface ProjectConfigParametersTable {
  id: Generated<number>;
  project_id: number;
  key: string;
  value: string;
}

export interface DevicesTable {
  id: Generated<number>;
  display_name: string;
  manufacturer: string;
  os_type: string;
  platform: string;
  release_version: string;
  api_level: number | null;
  credits_price: number;
  enabled: Flag;
  online: Flag;
  state: string;
  create_time: number;
  serial: string | null;
  agent_id: number | null;
  /** Comma-separated execution kinds the device's driver can run. */
  execution_kinds: Generated<string>;
  last_seen_time: number | null;
  infra_failure_streak: Generated<number>;
  state_reason: string | null;
}

export interface DeviceGroupsTable {
  id: Generated<number>;
  user_id: number | null;
  display_name: string;
  os_type: string;
  shared: Flag;
  create_time: number;
}

export interface DeviceGroupDevicesTable {
  group_id: number;
  device_id: number;
}

/** The fixed label groups (domain/labels.ts#LABEL_GROUPS, written by migration 016). */
export interface LabelGroupsTable {
  id: number;
  name: string;
  display_name: string;
  hidden_by_default: Flag;
  os_type: string | null;
}

/** Values within a label group, made as devices first report them. */
export interface LabelsTable {
  id: Generated<number>;
  group_id: number;
  name: string;
  display_name: string;
}

/** The labels each device carries, derived from what its host reports. */
export interface DeviceLabelsTable {
  device_id: number;
  label_id: number;
}

/** The labels a device group selects devices by (docs/api.md#device-selection). */
export interface DeviceGroupSelectorsTable {
  group_id: number;
  label_id: number;
}

export interface TestRunsTable {
  id: Generated<number>;
  project_id: number;
  user_id: number;
  number: number;
  name: string | null;
  state: string;
  os_type: string;
  create_time: number;
  start_time: number | null;
  end_time: number | null;
  config_json: string;
  framework_id: number | null;
  started_by_id: number;
  scheduler: Generated<string>;
  hook_url: string | null;
  final_tallies_json: string | null;
}

/** A run's passwords (domain/run-settings.ts RunSecrets), sealed as API keys are (migration 010). */
export interface TestRunSecretsTable {
  test_run_id: number;
  sealed: string;
  key_id: string;
}

export interface DeviceRunsTable {
  id: Generated<number>;
  test_run_id: number;
  project_id: number;
  user_id: number;
  device_id: number;
  state: string;
  exclude_reason: string | null;
  create_time: number;
  install_time: number | null;
  start_time: number | null;
  end_time: number | null;
  time_limit: number;
  test_case_all_count: number;
  test_case_passed_count: number;
  test_case_failed_count: number;
  test_case_skipped_count: number;
  retry_state: string;
  auto_retries_left_count: number;
  current_step: string | null;
  current_step_start_time: number | null;
  priority: Generated<number>;
  agent_id: number | null;
  lease_expires_time: number | null;
  last_seq: Generated<number>;
  superseded: Generated<number>;
  retried_from_id: number | null;
  serial_group: number | null;
  single_group: number | null;
  fail_reason: string | null;
  framework_kind: string | null;
}

export interface DeviceRunStepsTable {
  id: Generated<number>;
  device_run_id: number;
  type: string;
  start_time: number;
  finish_time: number | null;
  fail_reason: string | null;
}

export interface OAuthTokensTable {
  id: Generated<number>;
  user_id: number;
  access_hash: string;
  refresh_hash: string;
  access_expires_time: number;
  refresh_expires_time: number;
  create_time: number;
}

export interface RecorderAuthorizationsTable {
  id: Generated<number>;
  user_id: number;
  token_hash: string;
  create_time: number;
  end_time: number | null;
}

export interface RecordingsTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  os_type: string | null;
  authorization_id: number | null;
  state: string;
  step_count: Generated<number>;
  create_time: number;
  end_time: number | null;
}

export interface RecordingStepsTable {
  recording_id: number;
  position: number;
  action: string;
  target: string | null;
  value: string | null;
  time: number;
}

export interface WebSessionsTable {
  id: Generated<number>;
  user_id: number;
  token_hash: string;
  csrf_token: string;
  create_time: number;
  expires_time: number;
  /** When the password was last entered in this session: revealing the API key needs a recent one. */
  auth_time: number;
  /** Wrong passwords given to confirm the sign-in; a few end the session. */
  confirm_failures: Generated<number>;
}

export interface AgentsTable {
  id: Generated<number>;
  name: string;
  token_hash: string;
  hostname: string | null;
  version: string | null;
  create_time: number;
  last_seen_time: number | null;
}

export interface FilesTable {
  id: Generated<number>;
  user_id: number;
  project_id: number | null;
  project_slot: string | null;
  device_run_id: number | null;
  name: string;
  size: number;
  mimetype: string;
  sha256: string;
  blob_key: string;
  state: string;
  direction: string;
  input_type: string | null;
  os_type: string | null;
  duplicate: Generated<Flag>;
  properties_json: string;
  /** Comma-separated. */
  tags: Generated<string>;
  create_time: number;
}

export interface TestCaseRunsTable {
  id: Generated<number>;
  device_run_id: number;
  suite_name: string | null;
  class_name: string;
  method_name: string;
  duration: number;
  result: string;
  error_message: string | null;
  stacktrace: string | null;
}

export interface PerformanceSamplesTable {
  id: Generated<number>;
  device_run_id: number;
  timestamp: number;
  cpu_usage: number;
  mem_usage: number | null;
  package_name: string | null;
}

export interface HookDeliveriesTable {
  id: Generated<number>;
  test_run_id: number;
  url: string;
  status: string;
  attempts: Generated<number>;
  next_attempt_time: number;
  last_error: string | null;
  create_time: number;
  /** How it is sent (migration 020): WEBHOOK (a form POST, as hookURL), SLACK, or EMAIL. */
  channel: Generated<string>;
  /** The subscription it comes from; null for a run's hookURL. */
  notification_id: number | null;
}

/** A user's notification subscriptions (domain/notifications.ts). */
export interface NotificationsTable {
  id: Generated<number>;
  user_id: number;
  /** null: every project of the user. */
  project_id: number | null;
  channel: string;
  destination: string;
  scope: string;
  create_time: number;
}

/** The cloud's system properties (domain/properties.ts, migration 024). */
export interface PropertiesTable {
  id: Generated<number>;
  name: string;
  value: string | null;
  description: string | null;
  from_time: number | null;
  to_time: number | null;
  update_time: number;
  /** The operator who last wrote it; null once that account is deleted. */
  updated_by: number | null;
}

/** What a user changed of their preferences (domain/preferences.ts); no row: the defaults. */
export interface UserPreferencesTable {
  user_id: number;
  test_timeout: number | null;
}

/** Each account's bytes of files, kept by triggers on files (migration 009), and its quota override. */
export interface StorageUsageTable {
  user_id: number;
  used_bytes: Generated<number>;
  quota_bytes: number | null;
}

/** Recent failed sign-ins per account (services/password-guesses.ts). */
export interface PasswordGuessesTable {
  id: Generated<number>;
  account_key: string;
  time: number;
}

export interface AccessGroupsTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  scope: string;
  create_time: number;
}

export interface AccessGroupUsersTable {
  access_group_id: number;
  user_id: number;
}

/** One record shared (exactly one of the three) with a user or an access group (exactly one of the two). */
export interface SharesTable {
  id: Generated<number>;
  owner_id: number;
  project_id: number | null;
  device_group_id: number | null;
  file_id: number | null;
  user_id: number | null;
  access_group_id: number | null;
  create_time: number;
}

export interface Tables {
  users: UsersTable;
  projects: ProjectsTable;
  project_configs: ProjectConfigsTable;
  project_config_parameters: ProjectConfigParametersTable;
  devices: DevicesTable;
  device_groups: DeviceGroupsTable;
  device_group_devices: DeviceGroupDevicesTable;
  label_groups: LabelGroupsTable;
  labels: LabelsTable;
  device_labels: DeviceLabelsTable;
  device_group_selectors: DeviceGroupSelectorsTable;
  test_runs: TestRunsTable;
  test_run_secrets: TestRunSecretsTable;
  device_runs: DeviceRunsTable;
  device_run_steps: DeviceRunStepsTable;
  agents: AgentsTable;
  oauth_tokens: OAuthTokensTable;
  web_sessions: WebSessionsTable;
  recorder_authorizations: RecorderAuthorizationsTable;
  recordings: RecordingsTable;
  recording_steps: RecordingStepsTable;
  files: FilesTable;
  test_case_runs: TestCaseRunsTable;
  performance_samples: PerformanceSamplesTable;
  hook_deliveries: HookDeliveriesTable;
  notifications: NotificationsTable;
  user_preferences: UserPreferencesTable;
  properties: PropertiesTable;
  storage_usage: StorageUsageTable;
  password_guesses: PasswordGuessesTable;
  access_groups: AccessGroupsTable;
  access_group_users: AccessGroupUsersTable;
  shares: SharesTable;
  webdriver_sessions: WebDriverSessionsTable;
  webdriver_commands: WebDriverCommandsTable;
  webdriver_handoffs: WebDriverHandoffsTable;
  live_frames: LiveFramesTable;
  live_log_lines: LiveLogLinesTable;
}

/** Appium client side sessions (migration 025): one per device run. */
export interface WebDriverSessionsTable {
  id: string;
  device_run_id: number;
  user_id: number;
  create_time: number;
  end_time: number | null;
}

/** Every WebDriver command of a session: the relay to its agent and the command log. */
export interface WebDriverCommandsTable {
  id: Generated<number>;
  device_run_id: number;
  method: string;
  path: string;
  body: string;
  state: 'PENDING' | 'TAKEN' | 'ANSWERED';
  status: number | null;
  answer: string | null;
  create_time: number;
  answer_time: number | null;
}

/** An answer to a command relayed in memory that reached another server than the command (migration 026). */
export interface WebDriverHandoffsTable {
  command_id: number;
  device_run_id: number;
  status: number;
  answer: string;
  answer_time: number;
}

/** The newest frame of an interactive session's screen (migration 023). */
export interface LiveFramesTable {
  device_run_id: number;
  seq: number;
  media_type: string;
  /** Base64. */
  data: string;
  frame_time: number;
  store_time: number;
}

/** The device's log during an interactive session, line by line (migration 023). */
export interface LiveLogLinesTable {
  id: Generated<number>;
  device_run_id: number;
  line: string;
}
