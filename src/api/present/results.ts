import type { UserFile } from '../../domain/files.ts';
import type { StoredSample } from '../../domain/runs.ts';
import type { TestCaseRunView } from '../../services/views.ts';
import { PLAIN_ARRAY } from '../encode/json.ts';
import { type PresentContext, userPath } from './context.ts';
import Type from 'typebox';
import { AlwaysNull, Bool, Count, Id, MaybeStr, SelfURI, Str, Time } from './fields.ts';
import { Nested, Nullable, type Rep, entity, entitySchema, repList } from './representation.ts';

export const ApiTestCaseRun = entitySchema('apiTestCaseRun', {
  id: Id,
  deviceSessionId: Id,
  suiteName: MaybeStr,
  className: Str,
  methodName: Str,
  duration: Type.Number({ description: 'Milliseconds' }),
  result: Type.String({ description: 'PASSED, FAILED or SKIPPED' }),
  errorMessage: MaybeStr,
  stacktrace: MaybeStr,
  selfURI: AlwaysNull,
  createTime: AlwaysNull,
  steps: AlwaysNull,
  flaky: Type.Boolean({ description: 'Both passed and failed on the build this session tested (flaky-tests)' }),
});

export const ApiDeviceRunPerformance = entitySchema('apiDeviceRunPerformance', {
  timestamp: Time,
  cpuUsage: Type.Number({ description: 'Share of one CPU, 0..1' }),
  memUsage: Nullable(Type.Number({ description: 'KB' })),
  packageName: MaybeStr,
});

/** A plain JSON array (no envelope); in XML, `<list>` of `<apiDeviceRunPerformance>`. */
export const ApiPerformance = Type.Array(Nested(ApiDeviceRunPerformance), {
  title: 'apiDeviceRunPerformanceArray',
  xml: { name: PLAIN_ARRAY, wrapped: true },
});

export const ApiScreenshot = entitySchema('apiScreenshot', {
  id: Id,
  selfURI: SelfURI,
  originalName: Str,
  createTime: Time,
  size: Count,
  takeTimestamp: Time,
  fail: Bool,
  type: AlwaysNull,
});

export function presentTestCaseRun({ testCase, flaky }: TestCaseRunView): Rep {
  return entity(ApiTestCaseRun, {
    id: testCase.id,
    deviceSessionId: testCase.deviceRunId,
    suiteName: testCase.suiteName,
    className: testCase.className,
    methodName: testCase.methodName,
    duration: testCase.duration,
    result: testCase.result,
    errorMessage: testCase.errorMessage,
    stacktrace: testCase.stacktrace,
    // Test cases are parsed from JUnit: no resource, time or steps of their own.
    selfURI: null,
    createTime: null,
    steps: null,
    flaky,
  });
}

/** A plain JSON array, not an envelope (docs/api.md#device-runs-and-device-sessions). */
export function presentSamples(samples: readonly StoredSample[]): Rep {
  return repList(
    PLAIN_ARRAY,
    samples.map((sample) =>
      entity(ApiDeviceRunPerformance, {
        timestamp: sample.timestamp,
        cpuUsage: sample.cpuUsage,
        memUsage: sample.memUsage,
        packageName: sample.packageName,
      }),
    ),
  );
}

export function presentScreenshot(file: UserFile, context: PresentContext): Rep {
  return entity(ApiScreenshot, {
    id: file.id,
    selfURI: `${userPath(context)}/device-sessions/${file.deviceRunId}/screenshots/${file.id}`,
    originalName: file.name,
    createTime: file.createTime,
    size: file.size,
    // Taken when the test saved it, which is when it arrived as far as the service knows; its
    // orientation (LANDSCAPE or PORTRAIT) is not read from the image, and no screenshot marks a failure.
    takeTimestamp: file.createTime,
    fail: false,
    type: null,
  });
}
