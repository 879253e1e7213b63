/**
 * The test frameworks the cloud offers (`/me/available-frameworks`): the established API's iOS list (KIF,
 * XCTest, XCUITest, Jasmine, Calabash, Appium, the crawler; UI Automation listed but refused on
 * current Xcode) and the Android ones. Each maps to an execution kind that drivers declare they
 * can run, and says which files a run needs. Ids are stable: clients store them.
 */
import type { ExecutionKind } from './frameworks-kinds.ts';
import { INTERACTIVE_FRAMEWORK } from './interactive.ts';
import type { Mode } from './project-config.ts';

export interface Framework {
  readonly id: number;
  readonly name: string;
  readonly osType: 'ANDROID' | 'IOS';
  readonly kind: ExecutionKind;
  readonly description: string;
  /** Extensions accepted for the app (INSTALL); empty = no app needed. */
  readonly requiredAppExtensions: readonly string[];
  /** Extensions accepted for the test file (RUN_TEST); empty = no test file. */
  readonly requiredTestExtensions: readonly string[];
  readonly requiresSourceCode: boolean;
  readonly canRunFromUI: boolean;
  /** Legacy project types that use it. */
  readonly forProjects: readonly string[];
  /** Whether failed device runs of it may be retried. */
  readonly retryable: boolean;
  /** Why it cannot be used, when it cannot (listed for clients that look for it). */
  readonly unavailableReason: string | null;
}

const android = (
  f: Omit<Framework, 'osType' | 'requiredAppExtensions' | 'unavailableReason'> & { requiredAppExtensions?: string[] },
): Framework => ({
  osType: 'ANDROID',
  requiredAppExtensions: ['apk'],
  unavailableReason: null,
  ...f,
});
const ios = (
  f: Omit<Framework, 'osType' | 'requiredAppExtensions' | 'unavailableReason'> & { unavailableReason?: string },
): Framework => ({
  osType: 'IOS',
  requiredAppExtensions: ['ipa'],
  unavailableReason: null,
  ...f,
});

/** The iOS crawler: rules name it (docs/api.md#project-config, docs/api.md#the-run-in-cloud-ide-plug-in). */
export const IOS_CRAWLER_ID = 18;

export const FRAMEWORKS: readonly Framework[] = [
  android({
    id: 1,
    name: 'Android Instrumentation (Espresso)',
    kind: 'instrumentation',
    description: 'Instrumentation tests of a test APK against the app (Espresso, AndroidJUnitRunner)',
    requiredTestExtensions: ['apk'],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['ANDROID'],
    retryable: true,
  }),
  android({
    id: 2,
    name: 'Android UI Automator',
    kind: 'uiautomator',
    description: 'UI Automator tests in a test APK',
    requiredTestExtensions: ['apk'],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['UIAUTOMATOR'],
    retryable: true,
  }),
  android({
    id: 3,
    name: 'Appium Android client side',
    kind: 'appium-client',
    description: 'Your Appium client drives the device from outside; upload only the app',
    requiredTestExtensions: [],
    requiresSourceCode: false,
    canRunFromUI: false,
    forProjects: ['APPIUM_ANDROID'],
    retryable: false,
  }),
  android({
    id: 4,
    name: 'Appium Android server side',
    kind: 'server-side',
    description: 'A zip with run-tests.sh runs next to the device (Appium tests in any language)',
    requiredTestExtensions: ['zip'],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['APPIUM_ANDROID', 'GENERIC'],
    retryable: true,
  }),
  android({
    id: 5,
    name: 'Calabash Android',
    kind: 'calabash',
    description: 'Calabash features in a zip',
    requiredTestExtensions: ['zip'],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['CALABASH'],
    retryable: true,
  }),
  android({
    id: 6,
    name: 'Android App Crawler',
    kind: 'crawler',
    description: 'The service explores the app: every activity, then random input; no tests needed',
    requiredTestExtensions: [],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['ANDROID'],
    retryable: true,
  }),
  android({
    id: 7,
    name: 'Android server side (generic)',
    kind: 'server-side',
    description: 'Any test framework: a zip with run-tests.sh that runs against the device',
    requiredTestExtensions: ['zip'],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['GENERIC'],
    retryable: true,
  }),
  ios({
    id: 11,
    name: 'XCTest',
    kind: 'xctest',
    description: 'XCTest bundles in a zip',
    requiredTestExtensions: ['zip'],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['XCTEST'],
    retryable: true,
  }),
  ios({
    id: 12,
    name: 'XCUITest',
    kind: 'xcuitest',
    description: 'An XCUITest runner app (ipa or zip)',
    requiredTestExtensions: ['ipa', 'zip'],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['XCUITEST'],
    retryable: true,
  }),
  ios({
    id: 13,
    name: 'KIF',
    kind: 'kif',
    description: 'KIF tests build from your source code: upload the project sources as the test zip',
    requiredTestExtensions: ['zip'],
    requiresSourceCode: true,
    canRunFromUI: true,
    forProjects: ['IOS'],
    retryable: true,
  }),
  ios({
    id: 14,
    name: 'Jasmine',
    kind: 'jasmine',
    description: 'Jasmine specs in a zip',
    requiredTestExtensions: ['zip'],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['IOS'],
    retryable: true,
  }),
  ios({
    id: 15,
    name: 'Calabash iOS',
    kind: 'calabash',
    description: 'Calabash features in a zip',
    requiredTestExtensions: ['zip'],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['CALABASH_IOS'],
    retryable: true,
  }),
  ios({
    id: 16,
    name: 'Appium iOS client side',
    kind: 'appium-client',
    description: 'Your Appium client drives the device from outside; upload only the app',
    requiredTestExtensions: [],
    requiresSourceCode: false,
    canRunFromUI: false,
    forProjects: ['APPIUM_IOS'],
    retryable: false,
  }),
  ios({
    id: 17,
    name: 'Appium iOS server side',
    kind: 'server-side',
    description: 'A zip with run-tests.sh runs next to the device (Appium tests in any language)',
    requiredTestExtensions: ['zip'],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['APPIUM_IOS', 'GENERIC'],
    retryable: true,
  }),
  ios({
    id: IOS_CRAWLER_ID,
    name: 'iOS Crawler',
    kind: 'crawler',
    description:
      'The service explores the app screen by screen; no tests needed. Not available from the run-in-cloud IDE plug-in',
    requiredTestExtensions: [],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['IOS'],
    retryable: true,
  }),
  ios({
    id: 19,
    name: 'iOS UI Automation',
    kind: 'xctest',
    description: 'Apple removed UI Automation in Xcode 8',
    requiredTestExtensions: ['zip'],
    requiresSourceCode: false,
    canRunFromUI: false,
    forProjects: ['IOS'],
    retryable: false,
    unavailableReason:
      'UI Automation is not supported with current Xcode releases (Apple removed it in Xcode 8); use XCUITest instead',
  }),
  ios({
    id: 20,
    name: 'iOS server side (generic)',
    kind: 'server-side',
    description: 'Any test framework: a zip with run-tests.sh that runs against the device',
    requiredTestExtensions: ['zip'],
    requiresSourceCode: false,
    canRunFromUI: true,
    forProjects: ['GENERIC'],
    retryable: true,
  }),
  // docs/api.md#interactive-sessions: started with POST /me/device-sessions, not as runs.
  ...(['ANDROID', 'IOS'] as const).map((osType): Framework => ({
    id: INTERACTIVE_FRAMEWORK[osType],
    name: `Interactive session (${osType === 'ANDROID' ? 'Android' : 'iOS'})`,
    osType,
    kind: 'interactive',
    description: 'A device reserved for you: its live screen in the browser, your taps and keys on it',
    requiredAppExtensions: [],
    requiredTestExtensions: [],
    requiresSourceCode: false,
    canRunFromUI: false,
    forProjects: [],
    retryable: false,
    unavailableReason: null,
  })),
];

const BY_ID = new Map(FRAMEWORKS.map((framework) => [framework.id, framework]));

export function frameworkById(id: number): Framework | undefined {
  return BY_ID.get(id);
}

/** The framework a legacy project config mode means (docs/api.md#project-config). */
export function frameworkOfMode(mode: Mode, osType: 'ANDROID' | 'IOS'): Framework {
  const id: Record<Mode, number> = {
    FULL_RUN: 1,
    UIAUTOMATOR: 2,
    APP_CRAWLER: 6,
    CALABASH: 5,
    APPIUM_ANDROID: 4,
    IOS: 11,
    XCTEST: 11,
    XCUITEST: 12,
    IOS_CRAWLER: IOS_CRAWLER_ID,
    CALABASH_IOS: 15,
    APPIUM_IOS: 17,
    GENERIC: osType === 'IOS' ? 20 : 7,
  };
  return BY_ID.get(id[mode])!;
}
