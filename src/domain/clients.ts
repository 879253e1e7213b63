/**
 * Who is calling, where a rule depends on it (docs/api.md#the-run-in-cloud-ide-plug-in): the
 * run-in-cloud IDE plug-in identifies itself, with an `X-DeviceCloud-Client` header or a User-Agent token
 * `run-in-cloud-ide/<version>`, and may not start the iOS crawler.
 */
import { ForbiddenError } from './errors.ts';
import { type Framework, IOS_CRAWLER_ID } from './frameworks.ts';

export type RunClient = 'api' | 'ide-plugin';

const IDE_PLUGIN = /(^|[\s;(])run-in-cloud-ide(\/|\s|;|\)|$)/i;

export function runClientOf(headers: { readonly client?: string; readonly userAgent?: string }): RunClient {
  return [headers.client, headers.userAgent].some((value) => value !== undefined && IDE_PLUGIN.test(value))
    ? 'ide-plugin'
    : 'api';
}

export function checkClientMayRun(client: RunClient, framework: Framework): void {
  if (client === 'ide-plugin' && framework.id === IOS_CRAWLER_ID) {
    throw new ForbiddenError(
      'The iOS crawler cannot be started from the run-in-cloud IDE plug-in: start it from the web dashboard (Start a run), or through the API: ' +
        'POST /api/v2/runs with frameworkId ' +
        IOS_CRAWLER_ID +
        ', or the project config mode IOS_CRAWLER',
    );
  }
}
