/** A flaky test with its history (docs/api.md#flaky-tests). */
import Type from 'typebox';
import type { FlakyTest } from '../../domain/flaky-tests.ts';
import { type PresentContext, userPath } from './context.ts';
import { Count, Id, SelfURI, Str, Time } from './fields.ts';
import { Nested, type Rep, entity, entitySchema } from './representation.ts';

export const ApiFlakyOutcome = entitySchema('apiFlakyTestOutcome', {
  runId: Id,
  deviceSessionId: Id,
  deviceSessionURI: SelfURI,
  deviceId: Id,
  deviceName: Str,
  result: Type.String({ description: 'PASSED or FAILED' }),
  time: Time,
});

export const ApiFlakyTest = entitySchema('apiFlakyTest', {
  className: Str,
  methodName: Str,
  appSha256: Type.String({
    description: "SHA-256 of the app the runs installed; '' without an app, file:{id} once the file is deleted",
  }),
  passedCount: Count,
  failedCount: Count,
  lastSeenTime: Time,
  history: Type.Array(Nested(ApiFlakyOutcome), { description: 'Newest first, at most 50' }),
});

export function presentFlakyTest(test: FlakyTest, context: PresentContext): Rep {
  return entity(ApiFlakyTest, {
    className: test.className,
    methodName: test.methodName,
    appSha256: test.appSha256,
    passedCount: test.passedCount,
    failedCount: test.failedCount,
    lastSeenTime: test.lastSeenTime,
    history: test.history.map((outcome) =>
      entity(ApiFlakyOutcome, {
        runId: outcome.runId,
        deviceSessionId: outcome.deviceSessionId,
        deviceSessionURI: `${userPath(context)}/device-sessions/${outcome.deviceSessionId}`,
        deviceId: outcome.deviceId,
        deviceName: outcome.deviceName,
        result: outcome.result,
        time: outcome.time,
      }),
    ),
  });
}
