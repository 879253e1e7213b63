/** A busy device's screen as the devices page shows it (docs/api.md#device-screens). */
import Type from 'typebox';
import type { DeviceScreen } from '../../domain/interactive.ts';
import { type PresentContext, userPath } from './context.ts';
import { Id, SelfURI } from './fields.ts';
import { Nullable, type Rep, entity, entitySchema } from './representation.ts';

export const ApiDeviceScreen = entitySchema('apiDeviceScreen', {
  deviceId: Id,
  deviceSessionId: Id,
  deviceSessionURI: SelfURI,
  type: Type.String({ description: 'MANUAL (an interactive session) or AUTOMATIC (a run)' }),
  picture: Nullable(
    Type.String({
      description:
        "Absolute URL of the session's newest picture: its newest live frame, else its newest screenshot; " +
        'a new URL for each new picture; null while it has none',
    }),
  ),
});

export function presentDeviceScreen(screen: DeviceScreen, context: PresentContext): Rep {
  const session = `${context.baseUrl}/api/v2/device-sessions/${screen.deviceRunId}`;
  return entity(ApiDeviceScreen, {
    deviceId: screen.deviceId,
    deviceSessionId: screen.deviceRunId,
    deviceSessionURI: `${userPath(context)}/device-sessions/${screen.deviceRunId}`,
    type: screen.interactive ? 'MANUAL' : 'AUTOMATIC',
    picture:
      screen.frame !== null
        ? `${session}/frame?seq=${screen.frame.seq}`
        : screen.screenshotFileId !== null
          ? `${session}/screenshots/${screen.screenshotFileId}`
          : null,
  });
}
