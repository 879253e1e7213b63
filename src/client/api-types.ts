/**
 * The JSON shapes of the public API that the client reads (docs/api.md#formats), as far as its users
 * need them (the CLI's client, and the dashboard through JSDoc); the server sends more fields,
 * which pass through untouched. State unions are the domain's own.
 */
import type { DeviceRunState, TestRunState } from '../domain/runs.ts';

export interface ApiList<T> {
  readonly data: T[];
  readonly total: number;
}

export interface ApiUser {
  readonly id: number;
  readonly email: string;
  readonly name?: string;
  readonly plan?: string;
  readonly accountRole?: string;
  readonly roles?: Array<{ name: string }>;
  /** Bytes of files and artifacts kept, and the account's storage quota. */
  readonly storageUsedBytes?: number;
  readonly storageQuotaBytes?: number;
  readonly [field: string]: unknown;
}

export interface ApiProject {
  readonly id: number;
  readonly name: string;
  readonly type: string;
  readonly createTime: number;
  readonly testRunCount?: number;
  /** In the listing: the newest runs (`embedRuns`). */
  readonly testRuns?: ApiTestRun[];
}

export type DeviceSessionState = DeviceRunState;

export interface ApiTestRun {
  readonly id: number;
  readonly projectId: number;
  readonly projectName: string;
  readonly displayName: string;
  readonly state: TestRunState;
  readonly createTime: number;
  readonly startTime: number | null;
  readonly endTime: number | null;
  readonly frameworkName: string | null;
  readonly startedByDisplayName: string | null;
  readonly deviceCount: number;
  readonly finishedDeviceCount: number;
  readonly succeededDeviceCount: number;
  readonly failedDeviceCount: number;
  readonly waitingDeviceCount: number;
  readonly runningDeviceCount: number;
  readonly warningDeviceCount: number;
  readonly timeoutedDeviceCount: number;
  readonly abortedDeviceCount: number;
  readonly excludedDeviceCount: number;
  readonly successRatio: number;
  readonly testCaseCount: number;
  readonly successfulTestCaseCount: number;
  readonly failedTestCaseCount: number;
  readonly message: string | null;
  readonly queuePosition: number | null;
}

/** docs/api.md#flaky-tests */
/** A busy device whose session the user may see, with its newest picture (docs/api.md#device-screens). */
export interface ApiDeviceScreen {
  readonly deviceId: number;
  readonly deviceSessionId: number;
  readonly type: 'MANUAL' | 'AUTOMATIC';
  readonly picture: string | null;
}

export interface ApiFlakyTest {
  readonly className: string;
  readonly methodName: string;
  readonly appSha256: string;
  readonly passedCount: number;
  readonly failedCount: number;
  readonly lastSeenTime: number;
  readonly history: ReadonlyArray<{
    readonly runId: number;
    readonly deviceSessionId: number;
    readonly deviceId: number;
    readonly deviceName: string;
    readonly result: 'PASSED' | 'FAILED';
    readonly time: number;
  }>;
}

export interface ApiDevice {
  readonly id: number;
  readonly displayName: string;
  readonly manufacturer: string;
  readonly osType: 'ANDROID' | 'IOS';
  readonly softwareVersion: { readonly releaseVersion: string; readonly apiLevel: number };
  readonly online: boolean;
  readonly locked: boolean;
  readonly enabled: boolean;
  readonly lockReason?: 'TESTING' | 'CLEANING' | 'NOT_OPERATIONAL' | null;
  /** Why the device is NOT_OPERATIONAL. */
  readonly stateReason?: string | null;
}

export interface ApiDeviceGroup {
  readonly id: number;
  readonly displayName: string;
  readonly osType: 'ANDROID' | 'IOS';
  readonly deviceCount: number;
  readonly isPublic: boolean;
}

export interface ApiDeviceSession {
  readonly id: number;
  readonly device: ApiDevice;
  readonly state: DeviceSessionState;
  readonly excludeReason: string | null;
  readonly createTime: number;
  readonly startTime: number | null;
  readonly endTime: number | null;
  /** Milliseconds so far, or in all once ended. */
  readonly duration: number | null;
  /** Seconds. */
  readonly timeLimit: number | null;
  readonly testRunId: number;
  readonly testCaseAllCount: number;
  readonly testCasePassedCount: number;
  readonly testCaseFailedCount: number;
  readonly testCaseSkippedCount: number;
  readonly retryState: string;
  readonly currentStep?: { readonly type: string } | null;
  /** The URL of the session's video, null when it has none (docs/api.md#videos). */
  readonly video?: string | null;
}

/** The legacy view of a device session (`…/device-runs`). */
export interface ApiDeviceRun {
  readonly id: number;
  readonly currentState: { readonly deviceRunStateType: string | null } | null;
}

/** One step of a device session's timeline (`…/steps`). */
export interface ApiStep {
  readonly type: string;
  readonly startTimeMS: number;
  readonly finishTimeMS: number | null;
  readonly failReason: string | null;
}

export interface ApiTestCaseRun {
  readonly id: number;
  readonly suiteName: string | null;
  readonly className: string;
  readonly methodName: string;
  readonly duration: number;
  readonly result: 'PASSED' | 'FAILED' | 'SKIPPED';
  readonly errorMessage: string | null;
  readonly stacktrace: string | null;
}

export interface ApiSample {
  readonly timestamp: number;
  readonly cpuUsage: number;
  /** KB; null where the device does not report it (iOS). */
  readonly memUsage: number | null;
  readonly packageName: string | null;
}

export interface ApiScreenshot {
  readonly id: number;
  readonly originalName: string;
  readonly size: number;
}

export interface ApiFramework {
  readonly id: number;
  readonly name: string;
  readonly osType: 'ANDROID' | 'IOS';
  readonly type: string;
  /** Extensions joined by commas, as the established API writes them: "apk", "" when none. */
  readonly requiredAppExtensions: string;
  readonly requiredTestExtensions: string;
  readonly forProjects?: boolean;
  readonly requiresSourceCode: boolean;
  readonly canRunFromUI?: boolean;
  readonly description?: string | null;
  readonly available: boolean;
  readonly unavailableReason: string | null;
}

export interface ApiFile {
  readonly id: number;
  readonly name: string;
  readonly size: number;
  readonly createTime: number;
  readonly inputType: 'APPLICATION' | 'TEST' | 'DATA' | null;
  readonly duplicate: boolean;
  readonly fileProperties: Array<{ key: string; value: string }>;
  /** Of output files: `junit`, `logs`, `video`, … */
  readonly tags?: string[];
}

/** The dashboard's sign-in session (`/auth/session`, docs/api.md#dashboard-sessions). */
export interface ApiWebSession {
  readonly userId: number;
  readonly email: string;
  readonly csrfToken: string;
  readonly expiresTime: number;
  readonly recentUntil: number;
  readonly recent: boolean;
}

/** An account as operators see it (`/admin/users`, docs/api.md#operators). */
export interface ApiManagedUser {
  readonly id: number;
  readonly email: string;
  readonly name: string | null;
  readonly plan: string;
  readonly role: string;
  readonly status: string;
  readonly enabled: boolean;
  readonly createTime: number;
  readonly lastLoginTime: number | null;
  readonly lastLaunchedTestTime: number | null;
  readonly storageUsedBytes: number;
  readonly storageQuotaBytes: number;
}

/** A device as operators see it, within its agent. */
export interface ApiManagedDevice extends ApiDevice {
  readonly state: string;
  readonly serial: string | null;
}

/** A device host's agent (`/admin/agents`). */
export interface ApiAgent {
  readonly id: number;
  readonly name: string;
  readonly hostname: string | null;
  readonly version: string | null;
  readonly lastSeenTime: number | null;
  readonly deviceCount: number;
  readonly onlineDeviceCount: number;
  readonly devices: ApiManagedDevice[];
}

/** The body of POST /runs (docs/api.md#starting-runs). */
export interface TestRunConfig {
  readonly osType: 'ANDROID' | 'IOS';
  readonly frameworkId: number;
  readonly projectId?: number;
  readonly projectName?: string;
  readonly deviceGroupId?: number;
  readonly deviceIds?: number[];
  readonly files: Array<{ id: number; action: 'INSTALL' | 'RUN_TEST' | 'COPY_TO_DEVICE' }>;
  readonly testRunName?: string;
  readonly timeout?: number;
  readonly testRunParameters?: Array<{ key: string; value: string }>;
  /** Retries of device runs that end WARNING (infrastructure), 0..5. */
  readonly maxAutoRetriesCount?: number;
  readonly scheduler?: 'PARALLEL' | 'SERIAL' | 'SINGLE';
  /** Whether the device sessions record a video (docs/api.md#videos); left out, the project's setting. */
  readonly videoRecordingEnabled?: boolean;
}
