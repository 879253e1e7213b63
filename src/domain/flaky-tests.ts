/**
 * Flaky tests (docs/api.md#flaky-tests): a test case that both passed and failed on the same app
 * build, whether across devices, automatic retries or runs. A build is the SHA-256 of the file a
 * run installs, so the same app uploaded twice is one build and a rebuilt app is another.
 */
import type { ListSpec } from './list-query.ts';
import type { TestCaseResult } from './test-cases.ts';

export type FlakyTestField = 'className' | 'methodName' | 'appSha256' | 'passedCount' | 'failedCount' | 'lastSeenTime';

export const FLAKY_TEST_LIST: ListSpec<FlakyTestField> = {
  entity: 'flaky tests',
  fields: {
    className: { type: 'string' },
    methodName: { type: 'string' },
    appSha256: { type: 'string' },
    passedCount: { type: 'number' },
    failedCount: { type: 'number' },
    lastSeenTime: { type: 'date' },
  },
  defaultSort: [{ field: 'lastSeenTime', direction: 'desc' }],
};

/** One outcome of the test on one device session. */
export interface FlakyOutcome {
  readonly runId: number;
  readonly deviceSessionId: number;
  readonly deviceId: number;
  readonly deviceName: string;
  readonly result: Extract<TestCaseResult, 'PASSED' | 'FAILED'>;
  readonly time: number;
}

export interface FlakyTest {
  readonly className: string;
  readonly methodName: string;
  /** '' for runs that install no app; `file:{id}` when the app file was since deleted. */
  readonly appSha256: string;
  readonly passedCount: number;
  readonly failedCount: number;
  readonly lastSeenTime: number;
  /** Newest first, at most HISTORY_LIMIT. */
  readonly history: readonly FlakyOutcome[];
}

export const HISTORY_LIMIT = 50;

/** One test (class and method) as a key, to match a session's test cases with its flaky tests. */
export function flakyTestKey(className: string, methodName: string): string {
  return JSON.stringify([className, methodName]);
}
