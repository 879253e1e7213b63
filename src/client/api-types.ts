/**
 * The JSON shapes of the public API that the client reads (docs/api.md#formats), as far as its users need
 * them; the server sends more fields, which pass through untouched.
 */

export interface ApiList<T> {
  readonly data: T[];
  readonly total: number;
}

export interface ApiUser {
  readonly id: number;
  readonly email: string;
  readonly name?: string;
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
}

export type DeviceSessionState = 'WAITING' | 'RUNNING' | 'FINISHING' | 'SUCCEEDED' | 'FAILED' | 'WARNING' | 'TIMEOUT' | 'ABORTED' | 'EXCLUDED';

export interface ApiTestRun {
  readonly id: number;
  readonly projectId: number;
  readonly projectName: string;
  readonly displayName: string;
  readonly state: 'WAITING' | 'RUNNING' | 'FINISHED';
  readonly createTime: number;
  readonly frameworkName: string | null;
  readonly deviceCount: number;
  readonly finishedDeviceCount: number;
  readonly succeededDeviceCount: number;
  readonly failedDeviceCount: number;
  readonly testCaseCount: number;
  readonly successfulTestCaseCount: number;
  readonly failedTestCaseCount: number;
  readonly message: string | null;
  readonly queuePosition: number | null;
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
  readonly startTime: number | null;
  readonly endTime: number | null;
  readonly testCaseAllCount: number;
  readonly testCasePassedCount: number;
  readonly testCaseFailedCount: number;
  readonly testCaseSkippedCount: number;
  readonly retryState: string;
  readonly currentStep?: { readonly type: string } | null;
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
  readonly memUsage: number;
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
  readonly requiredAppExtensions: string[];
  readonly requiredTestExtensions: string[];
  readonly requiresSourceCode: boolean;
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
}
