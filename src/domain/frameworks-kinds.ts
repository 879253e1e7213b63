/**
 * How a framework is executed on a device. Frameworks (domain/frameworks.ts) map to one kind; each
 * driver declares which kinds it can honestly run, and a device that cannot run a run's kind gets
 * its device run EXCLUDED with FRAMEWORK_NOT_SUPPORTED instead of a fake result.
 */
export const EXECUTION_KINDS = [
  /** `am instrument` of a test APK against the app (Espresso, plain instrumentation). */
  'instrumentation',
  /** UI Automator tests, run through instrumentation as well. */
  'uiautomator',
  /** A zip with `run-tests.sh` run on the host against the device (Appium server side, generic). */
  'server-side',
  /** The client drives an Appium session from outside; the cloud only provides the device. */
  'appium-client',
  /** The service explores the app itself (Android app crawler, iOS crawler). */
  'crawler',
  'calabash',
  'xctest',
  'xcuitest',
  'kif',
  'jasmine',
  /** A user drives the device by hand from the browser (docs/api.md#interactive-sessions). */
  'interactive',
] as const;
export type ExecutionKind = (typeof EXECUTION_KINDS)[number];

export function isExecutionKind(value: string): value is ExecutionKind {
  return (EXECUTION_KINDS as readonly string[]).includes(value);
}
