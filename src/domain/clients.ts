/**
 * Who is calling, where a rule depends on it (docs/api.md#the-run-in-cloud-ide-plug-in): the
 * run-in-cloud IDE plug-in identifies itself, with an `X-DeviceCloud-Client` header or a User-Agent token
 * `run-in-cloud-ide/<version>`, and may not start the iOS crawler.
 */
import { ForbiddenError, InvalidParameterError } from './errors.ts';
import { type Framework, IOS_CRAWLER_ID } from './frameworks.ts';

/** `interactive`: POST /me/device-sessions, the only way to start an interactive session's run. */
export type RunClient = 'api' | 'ide-plugin' | 'interactive';

const IDE_PLUGIN = /(^|[\s;(])run-in-cloud-ide(\/|\s|;|\)|$)/i;

export function runClientOf(headers: { readonly client?: string; readonly userAgent?: string }): RunClient {
  return [headers.client, headers.userAgent].some((value) => value !== undefined && IDE_PLUGIN.test(value))
    ? 'ide-plugin'
    : 'api';
}

export function checkClientMayRun(client: RunClient, framework: Framework): void {
  if ((client === 'interactive') !== (framework.kind === 'interactive'))
    throw new InvalidParameterError(
      'frameworkId',
      client === 'interactive'
        ? `${framework.name} is not an interactive session`
        : `${framework.name} is started with POST /api/v2/me/device-sessions (docs/api.md#interactive-sessions), not as a run`,
    );
  if (client === 'ide-plugin' && framework.id === IOS_CRAWLER_ID) {
    throw new ForbiddenError(
      'The iOS crawler cannot be started from the run-in-cloud IDE plug-in: start it from the web dashboard (Start a run), or through the API: ' +
        'POST /api/v2/runs with frameworkId ' +
        IOS_CRAWLER_ID +
        ', or the project config mode IOS_CRAWLER',
    );
  }
}
