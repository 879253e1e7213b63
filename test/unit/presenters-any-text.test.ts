/**
 * Every presenter, fed arbitrary text in every text field (and arbitrary keys where keys come from
 * data), gives an answer that parses in both encodings: well-formed XML 1.0, and JSON without lone
 * surrogates. The JUnit report, the other XML producer, is held to the same rule.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeJson } from '../../src/api/encode/json.ts';
import { encodeXml } from '../../src/api/encode/xml.ts';
import type { PresentContext } from '../../src/api/present/context.ts';
import type { Rep } from '../../src/api/present/representation.ts';
import type { Device, DeviceGroup } from '../../src/domain/devices.ts';
import type { UserFile } from '../../src/domain/files.ts';
import type { Label } from '../../src/domain/labels.ts';
import { frameworkById } from '../../src/domain/frameworks.ts';
import { EMPTY_RUN_STATS } from '../../src/domain/run-stats.ts';
import type { DeviceRun, TestRun } from '../../src/domain/runs.ts';
import type { User } from '../../src/domain/users.ts';
import { junitReport, junitSuites } from '../../src/results/junit-report.ts';
import type { RunView } from '../../src/services/views.ts';
import { anyText, notStrictJson, notWellFormed } from '../support/any-text.ts';

const PRESENT_DIR = path.resolve(import.meta.dirname, '../../src/api/present');
/** Exports of src/api/present/ that build parts of answers, or their schemas, rather than answers. */
const HELPERS = new Set([
  'rep',
  'repList',
  'isRep',
  'userPath',
  'KIND',
  'entity',
  'entitySchema',
  'Nested',
  'Nullable',
  'listSchema',
  'sharingOf',
  'configExtras',
  'itemList',
  'storedList',
]);

/** Hands out the generated texts in turn (and again from the start when they run out). */
interface Texts {
  (): string;
  /** Text for a field whose type is a closed set: the presenter copies it as it is. */
  as(): never;
  /** An object whose keys are text too. */
  dict(): Record<string, string>;
}

function textsFrom(values: readonly string[], keys: readonly string[]): Texts {
  let next = 0;
  const text = (() => values[next++ % values.length]!) as Texts;
  text.as = () => text() as never;
  text.dict = () => Object.fromEntries(keys.map((key) => [key, text()]));
  return text;
}

/** A label of the manufacturer group, its value any text (hosts report manufacturers). */
function label(s: Texts): Label {
  return { id: 9, groupId: 4, name: s(), displayName: s() };
}

function user(s: Texts): User {
  return {
    id: 1,
    email: s(),
    firstName: s(),
    lastName: s(),
    organization: s(),
    country: s(),
    timeZone: s(),
    address: s(),
    city: s(),
    code: s(),
    state: s(),
    phone: s(),
    vatId: s(),
    status: s.as(),
    role: s.as(),
    plan: s.as(),
    createTime: 1,
    lastLoginTime: null,
    lastLaunchedTestTime: 2,
  };
}
function context(s: Texts): PresentContext {
  return { user: user(s), baseUrl: s(), now: 1000 };
}
function device(s: Texts): Device {
  return {
    id: 3,
    displayName: s(),
    manufacturer: s(),
    osType: s.as(),
    platform: s(),
    releaseVersion: s(),
    apiLevel: 34,
    creditsPrice: 1,
    enabled: true,
    online: true,
    state: s.as(),
    serial: s(),
    agentId: 1,
    executionKinds: [],
    stateReason: s(),
  };
}
function group(s: Texts): DeviceGroup {
  return { id: 4, userId: 1, displayName: s(), osType: s.as(), shared: false, deviceCount: 1, ownerEmail: s() };
}
function file(s: Texts): UserFile {
  return {
    id: 5,
    userId: 1,
    projectId: null,
    projectSlot: null,
    deviceRunId: 9,
    name: s(),
    size: 10,
    mimetype: s(),
    sha256: s(),
    blobKey: s(),
    state: s.as(),
    direction: s.as(),
    inputType: s.as(),
    osType: s.as(),
    duplicate: false,
    properties: s.dict(),
    tags: [s(), s()],
    createTime: 1,
  } as UserFile;
}
function testRun(s: Texts): TestRun {
  const config: TestRun['config'] = {
    v: 1,
    osType: s.as(),
    frameworkId: 1,
    projectId: 7,
    deviceGroupId: null,
    deviceIds: [1],
    files: [{ id: 1, action: s.as() }],
    testRunName: s(),
    timeout: 60,
    testRunParameters: [{ key: s(), value: s() }],
    scheduler: s.as(),
    hookURL: s(),
    maxAutoRetriesCount: 0,
    deviceLanguageCode: s(),
    limitationType: s.as(),
    limitationValue: s(),
    instrumentationRunner: s(),
    withAnnotation: s(),
    withoutAnnotation: s(),
    applicationUsername: s(),
    launchApp: true,
    deviceLocale: s(),
    wifiEnabled: null,
    googleAccountEmail: s(),
  };
  return {
    id: 6,
    projectId: 7,
    userId: 1,
    number: 1,
    name: s(),
    state: s.as(),
    createTime: 1,
    startTime: 2,
    endTime: null,
    config,
    frameworkId: 1,
    startedById: 1,
    osType: s.as(),
    finalTallies: null,
  };
}
function deviceRun(s: Texts): DeviceRun {
  return {
    id: 9,
    testRunId: 6,
    projectId: 7,
    userId: 1,
    deviceId: 3,
    state: s.as(),
    excludeReason: s.as(),
    createTime: 1,
    installTime: 2,
    startTime: 3,
    endTime: null,
    timeLimit: 60,
    testCaseAllCount: 1,
    testCasePassedCount: 1,
    testCaseFailedCount: 0,
    testCaseSkippedCount: 0,
    retryState: s.as(),
    autoRetriesLeftCount: 0,
    currentStep: s.as(),
    currentStepStartTime: 3,
    failReason: s(),
    superseded: false,
    agentId: 1,
    frameworkKind: s(),
    retriedFromId: null,
    priority: 1,
    serialGroup: null,
    singleGroup: null,
  };
}
function runView(s: Texts): RunView {
  return {
    run: testRun(s),
    projectName: s(),
    startedByEmail: s(),
    stats: EMPTY_RUN_STATS,
    queue: { message: s(), position: 1 },
    deviceRuns: [
      {
        deviceRun: deviceRun(s),
        device: device(s),
        testRunName: s(),
        projectName: s(),
        userEmail: s(),
        videoFileId: 7,
      },
    ],
  };
}
function testCase(s: Texts) {
  return {
    id: 1,
    deviceRunId: 9,
    suiteName: s(),
    className: s(),
    methodName: s(),
    duration: 5,
    result: s.as() as 'FAILED',
    errorMessage: s(),
    stacktrace: s(),
  };
}

/** One case per presenter: its name (as exported) and how to call it with generated text. */
const PRESENTERS: Record<string, (s: Texts) => Promise<Rep>> = {
  presentAccessGroup: async (s) =>
    (await import('../../src/api/present/access-group.ts')).presentAccessGroup({
      id: 3,
      userId: 1,
      userEmail: s(),
      name: s(),
      scope: s.as(),
      createTime: 1,
    }),
  presentAccessGroupUser: async (s) =>
    (await import('../../src/api/present/access-group.ts')).presentAccessGroupUser(
      3,
      { id: 2, email: s(), firstName: s(), lastName: s() },
      context(s),
    ),
  presentSharedResource: async (s) =>
    (await import('../../src/api/present/access-group.ts')).presentSharedResource(
      {
        id: 9,
        ownerId: 1,
        type: s.as(),
        resourceId: 7,
        name: s(),
        userId: null,
        userEmail: null,
        accessGroupId: 3,
        createTime: 1,
      },
      context(s),
    ),
  presentNotification: async (s) =>
    (await import('../../src/api/present/account.ts')).presentNotification(
      {
        id: 1,
        userId: 1,
        projectId: 2,
        channel: s.as(),
        destination: s(),
        scope: s.as(),
        createTime: 1,
        projectName: s(),
      },
      context(s),
    ),
  presentPreferences: async (s) =>
    (await import('../../src/api/present/account.ts')).presentPreferences(
      {
        testTimeout: 1,
        defaultTestTimeout: 2,
        httpSessionMaxInactiveInterval: 3,
        defaultHttpSessionMaxInactiveInterval: 4,
      },
      context(s),
    ),
  presentStatistics: async (s) =>
    (await import('../../src/api/present/account.ts')).presentStatistics(
      {
        totalTestRuns: 1,
        runningTestRuns: 0,
        devicesUsed: 1,
        totalDeviceSessions: 1,
        succeededDeviceSessions: 1,
        failedDeviceSessions: 0,
        totalTestCases: 2,
        passedTestCases: 1,
        failedTestCases: 1,
        deviceTime: 5,
        allTimeProjects: 1,
      },
      context(s),
    ),
  presentDeviceUsage: async (s) =>
    (await import('../../src/api/present/account.ts')).presentDeviceUsage(
      {
        deviceId: 1,
        totalDeviceSessions: 2,
        failedDeviceSessions: 1,
        deviceTime: 3,
        days: [{ day: 0, deviceSessions: 2, deviceTime: 3 }],
      },
      device(s),
      context(s),
    ),
  presentProperty: async (s) =>
    (await import('../../src/api/present/property.ts')).presentProperty({
      id: 1,
      name: s(),
      value: s(),
      description: s(),
      fromTime: 1,
      toTime: 2,
      updateTime: 3,
      updatedById: 1,
      updatedByDisplayName: s(),
    }),
  presentDeviceScreen: async (s) =>
    (await import('../../src/api/present/device-screen.ts')).presentDeviceScreen(
      { deviceId: 1, deviceRunId: 2, interactive: true, frame: { seq: 3, frameTime: 4 }, screenshotFileId: null },
      context(s),
    ),
  presentEnum: async (s) => (await import('../../src/api/present/account.ts')).presentEnum(s(), 0),
  presentAgent: async (s) =>
    (await import('../../src/api/present/agent.ts')).presentAgent(
      { id: 1, name: s(), hostname: s(), version: s(), createTime: 1, lastSeenTime: 2 },
      [device(s)],
    ),
  presentDevice: async (s) =>
    (await import('../../src/api/present/device.ts')).presentDevice(device(s), {
      properties: [label(s)],
      origin: 'HYBRID',
    }),
  presentLabelGroup: async (s) =>
    (await import('../../src/api/present/label.ts')).presentLabelGroup({
      id: 4,
      name: s(),
      displayName: s(),
      hiddenByDefault: false,
      osType: null,
    }),
  presentLabel: async (s) => (await import('../../src/api/present/label.ts')).presentLabel(label(s)),
  presentDeviceProperties: async (s) =>
    (await import('../../src/api/present/label.ts')).presentDeviceProperties(3, [label(s), label(s)]),
  presentDevicePicker: async (s) =>
    (await import('../../src/api/present/label.ts')).presentDevicePicker(
      [{ id: 4, name: s(), displayName: s(), hiddenByDefault: true, osType: null }],
      [{ ...label(s), osType: 'UNDEFINED' }],
    ),
  presentManagedDevice: async (s) => (await import('../../src/api/present/device.ts')).presentManagedDevice(device(s)),
  presentDeviceGroup: async (s) =>
    (await import('../../src/api/present/device.ts')).presentDeviceGroup(group(s), context(s)),
  presentDeviceRun: async (s) =>
    (await import('../../src/api/present/device-run.ts')).presentDeviceRun(
      {
        deviceRun: deviceRun(s),
        device: device(s),
        testRunName: s(),
        projectName: s(),
        userEmail: s(),
        videoFileId: 7,
      },
      context(s),
    ),
  presentDeviceSession: async (s) =>
    (await import('../../src/api/present/device-run.ts')).presentDeviceSession(
      {
        deviceRun: deviceRun(s),
        device: device(s),
        testRunName: s(),
        projectName: s(),
        userEmail: s(),
        videoFileId: 7,
      },
      context(s),
    ),
  presentStep: async (s) =>
    (await import('../../src/api/present/device-run.ts')).presentStep({
      id: 1,
      deviceRunId: 9,
      type: s.as(),
      startTime: 1,
      finishTime: 2,
      failReason: s(),
    }),
  presentLegacyState: async (s) =>
    (await import('../../src/api/present/device-run.ts')).presentLegacyState(
      { id: 1, deviceRunId: 9, type: s.as(), startTime: 1, finishTime: null, failReason: s() },
      s(),
    ),
  presentError: async (s) => (await import('../../src/api/present/error.ts')).presentError(400, s()),
  presentFile: async (s) => (await import('../../src/api/present/file.ts')).presentFile(file(s), context(s)),
  presentFramework: async (s) =>
    (await import('../../src/api/present/framework.ts')).presentFramework({
      ...frameworkById(1)!,
      name: s(),
      kind: s.as(),
      description: s(),
      requiredAppExtensions: [s(), s()],
      requiredTestExtensions: [s()],
      forProjects: [s()],
      unavailableReason: s(),
    }),
  presentList: async (s) => {
    const { presentList } = await import('../../src/api/present/list.ts');
    const { presentDevice } = await import('../../src/api/present/device.ts');
    const query = { offset: 1, limit: 1, search: s(), sort: [], filters: [], raw: { sort: s(), filter: [s()] } };
    return presentList([presentDevice(device(s))], 5, query, { selfURI: s(), url: s(), extra: s.dict() });
  },
  presentWholeList: async (s) =>
    (await import('../../src/api/present/list.ts')).presentWholeList([], { selfURI: s(), url: s() }),
  presentProjectConfig: async (s) => {
    const config = {
      projectId: 7,
      mode: s.as(),
      usedDeviceGroupId: 4,
      scheduler: s.as(),
      timeout: 60,
      deviceLanguageCode: s(),
      hookURL: s(),
      instrumentationRunner: s(),
      limitationType: s.as(),
      limitationValue: s(),
      withAnnotation: s(),
      withoutAnnotation: s(),
      applicationUsername: s(),
      applicationPassword: s(),
      autoScreenshots: true,
      screenshotDir: s(),
      launchApp: true,
      videoRecordingEnabled: false,
      maxAutoRetriesCount: 0,
    } as const;
    return (await import('../../src/api/present/project-config.ts')).presentProjectConfig(
      { config, usedDeviceGroupName: s(), runAvailable: true },
      context(s),
    );
  },
  presentConfigParameter: async (s) =>
    (await import('../../src/api/present/project-config.ts')).presentConfigParameter(
      { id: 1, projectId: 7, key: s(), value: s() },
      context(s),
    ),
  presentProject: async (s) => {
    const project = {
      id: 7,
      name: s(),
      description: s(),
      type: s.as(),
      osType: s.as(),
      createTime: 1,
      archiveTime: null,
      archivingStrategy: s.as(),
      archivingItemCount: 3,
      common: false,
      shared: true,
      readOnly: false,
      // Another user's, shared with the caller: the owner's e-mail is answered too.
      userId: 2,
      ownerEmail: s(),
    } as const;
    return (await import('../../src/api/present/project.ts')).presentProject(
      { project, figures: { testRunCount: 1, successRatio: 0.5 }, testRuns: [runView(s)] },
      context(s),
    );
  },
  presentRecording: async (s) =>
    (await import('../../src/api/present/recording.ts')).presentRecording(
      {
        recording: {
          id: 1,
          userId: 1,
          name: s(),
          osType: s.as(),
          authorizationId: null,
          state: s.as(),
          stepCount: 1,
          createTime: 1,
          endTime: null,
        },
        authorized: false,
      },
      context(s),
    ),
  presentRecordingStep: async (s) =>
    (await import('../../src/api/present/recording.ts')).presentRecordingStep({
      position: 1,
      action: s.as(),
      target: s(),
      value: s(),
      time: 1,
    }),
  presentRecorderAuthorization: async (s) =>
    (await import('../../src/api/present/recording.ts')).presentRecorderAuthorization(
      { id: 1, userId: 1, createTime: 1, endTime: null },
      s(),
    ),
  presentTestCaseRun: async (s) =>
    (await import('../../src/api/present/results.ts')).presentTestCaseRun({ testCase: testCase(s), flaky: false }),
  presentSamples: async (s) =>
    (await import('../../src/api/present/results.ts')).presentSamples([
      { timestamp: 1, cpuUsage: 0.5, memUsage: 2, packageName: s() },
    ]),
  presentScreenshot: async (s) =>
    (await import('../../src/api/present/results.ts')).presentScreenshot(file(s), context(s)),
  presentRunPlan: async (s) => {
    const request = Object.fromEntries(
      [
        'testRunName',
        'hookURL',
        'deviceLanguageCode',
        'limitationType',
        'limitationValue',
        'instrumentationRunner',
        'withAnnotation',
        'withoutAnnotation',
        'applicationUsername',
        'applicationPassword',
      ].map((key) => [key, s()]),
    );
    const plan = {
      project: { newName: s(), type: s.as() },
      osType: s.as(),
      framework: { ...frameworkById(1)!, name: s() },
      group: group(s),
      devices: [
        { device: device(s), excludeReason: null },
        { device: device(s), excludeReason: s.as() },
      ],
      files: [{ file: file(s), action: s.as() }],
      timeout: 60,
      maxTimeout: 120,
      scheduler: s.as(),
      maxAutoRetriesCount: 0,
      parameters: [{ key: s(), value: s() }],
      deviceSettings: { locale: s(), wifi: true, googleAccount: { email: s(), password: s() } },
      request,
    };
    return (await import('../../src/api/present/run-plan.ts')).presentRunPlan(plan as never, context(s));
  },
  // No text of anyone's in it (the plan's defaults), but every presenter has its case.
  presentRunConfigDefaults: async (s) =>
    (await import('../../src/api/present/run-plan.ts')).presentRunConfigDefaults(600, context(s)),
  presentRunConfig: async (s) =>
    (await import('../../src/api/present/test-run.ts')).presentRunConfig(runView(s), context(s)),
  presentTestRun: async (s) =>
    (await import('../../src/api/present/test-run.ts')).presentTestRun(runView(s), context(s)),
  presentStoredConfig: async (s) =>
    (await import('../../src/api/present/run-config.ts')).presentStoredConfig(
      testRun(s).config,
      {
        runId: 1,
        projectId: 2,
        projectName: s(),
        usedDeviceGroupName: s(),
        runAvailable: true,
        computedDevices: [3],
        maxTimeout: 60,
        files: new Map([[1, file(s)]]),
      },
      context(s),
    ),
  presentCommand: async (s) =>
    (await import('../../src/api/present/webdriver-command.ts')).presentCommand(
      {
        id: 1,
        deviceRunId: 2,
        method: s(),
        path: s(),
        body: s(),
        state: 'ANSWERED',
        status: 200,
        answer: s(),
        createTime: 1,
        answerTime: 2,
      },
      s(),
    ),
  presentFlakyTest: async (s) =>
    (await import('../../src/api/present/flaky-test.ts')).presentFlakyTest(
      {
        className: s(),
        methodName: s(),
        appSha256: s(),
        passedCount: 1,
        failedCount: 1,
        lastSeenTime: 3,
        history: [{ runId: 1, deviceSessionId: 2, deviceId: 3, deviceName: s(), result: 'FAILED', time: 3 }],
      },
      context(s),
    ),
  presentRunStep: async (s) =>
    (await import('../../src/api/present/run-progress.ts')).presentRunStep(7, {
      type: 'RUNNING',
      startTime: 1,
      finishTime: null,
      failReason: s(),
      deviceSessionCount: 2,
      finishedDeviceSessionCount: 1,
    }),
  presentRunDataAvailability: async (s) =>
    (await import('../../src/api/present/run-progress.ts')).presentRunDataAvailability(
      {
        runId: 7,
        projectId: 3,
        sessions: [
          {
            deviceRunId: 9,
            logs: true,
            performance: false,
            screenshots: true,
            video: false,
            buildLogs: false,
            resultsDataZip: true,
          },
        ],
      },
      context(s),
    ),
  presentUser: async (s) =>
    (await import('../../src/api/present/user.ts')).presentUser(user(s), { usedBytes: 123, quotaBytes: 456 }, s()),
  presentManagedUser: async (s) =>
    (await import('../../src/api/present/user.ts')).presentManagedUser(user(s), { usedBytes: 123, quotaBytes: 456 }),
};

const generated = fc.record({
  values: fc.array(anyText, { minLength: 1, maxLength: 60 }),
  keys: fc.array(anyText, { maxLength: 4 }),
});
const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);

describe('every answer parses, whatever text it holds', () => {
  it('has a case for every presenter in src/api/present/', async () => {
    const exported: string[] = [];
    for (const name of fs.readdirSync(PRESENT_DIR).filter((entry) => entry.endsWith('.ts'))) {
      const module = (await import(path.join(PRESENT_DIR, name))) as Record<string, unknown>;
      exported.push(...Object.keys(module).filter((key) => typeof module[key] === 'function' && !HELPERS.has(key)));
    }
    expect(exported.sort()).toEqual(Object.keys(PRESENTERS).sort());
  });

  it.each(Object.keys(PRESENTERS))('%s: well-formed XML and strict JSON', async (name) => {
    await fc.assert(
      fc.asyncProperty(generated, async ({ values, keys }) => {
        const answer = await PRESENTERS[name]!(textsFrom(values, keys));
        expect(notWellFormed(encodeXml(answer))).toBeNull();
        expect(notStrictJson(encodeJson(answer))).toBeNull();
      }),
      { numRuns: RUNS },
    );
  });

  it('the JUnit report and merged reports are well-formed XML', () => {
    fc.assert(
      fc.property(generated, ({ values, keys }) => {
        const s = textsFrom(values, keys);
        const cases = ['PASSED', 'FAILED', 'SKIPPED'].map((result) => ({ ...testCase(s), result: result as 'FAILED' }));
        expect(notWellFormed(junitReport(s(), cases, 0))).toBeNull();
        expect(
          notWellFormed(
            junitSuites(s(), [
              { name: s(), testCases: cases, timestamp: null },
              { name: s(), testCases: [], timestamp: 1 },
            ]),
          ),
        ).toBeNull();
      }),
      { numRuns: RUNS * 2 },
    );
  });
});
