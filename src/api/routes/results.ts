/**
 * What a device session produced, under every path a client may use for it: the modern
 * `device-sessions/{id}` and the legacy `runs/{rid}/device-runs/{id}`, top-level or nested.
 */
import { Readable } from 'node:stream';
import Type from 'typebox';
import { OUTPUT_TAGS } from '../../domain/files.ts';
import { displayName } from '../../domain/runs.ts';
import { deviceRunSteps, getDeviceRun, requireRun } from '../../services/runs.ts';
import {
  logFiles,
  openOutput,
  outputFiles,
  performance,
  testCaseRunViews,
  testCaseRuns,
} from '../../services/results.ts';
import { fileAnswer } from '../downloads.ts';
import { ApiDeviceSessionStep, presentStep } from '../present/device-run.ts';
import { ApiUserFile, presentFile } from '../present/file.ts';
import { ApiDeviceSessionCommand, presentCommand } from '../present/webdriver-command.ts';
import { deviceRunCommands } from '../../services/webdriver.ts';
import { junitReport } from '../../results/junit-report.ts';
import { itemList, listSchema } from '../present/list.ts';
import {
  ApiPerformance,
  ApiScreenshot,
  ApiTestCaseRun,
  presentSamples,
  presentScreenshot,
  presentTestCaseRun,
} from '../present/results.ts';
import { type RouteSpec, bytes, bytesOf, ok, route, text, whole } from '../route.ts';
import { BASES, type Base, idOf, scopeOf } from './session-paths.ts';

const TAGS = ['Results'];
const TestCaseRunList = listSchema(ApiTestCaseRun);
const ScreenshotList = listSchema(ApiScreenshot);
const FileList = listSchema(ApiUserFile);
const StepList = listSchema(ApiDeviceSessionStep);
const BY_ID = [{ field: 'id', direction: 'asc' }] as const;
const TEST_CASE_RUNS = itemList(ApiTestCaseRun, {
  entity: 'test case runs',
  sort: BY_ID,
  search: ['suiteName', 'className', 'methodName'],
  shownOnly: ['steps'],
});
const SCREENSHOTS = itemList(ApiScreenshot, { entity: 'screenshots', sort: BY_ID, search: ['originalName'] });
const OUTPUT_FILES = itemList(ApiUserFile, { entity: 'files', sort: BY_ID, search: ['name'] });
const STEPS = itemList(ApiDeviceSessionStep, { entity: 'steps', sort: BY_ID, search: ['type'] });
const CommandList = listSchema(ApiDeviceSessionCommand);
/** The command log is answered whole, up to this many commands (the oldest). */
const COMMANDS_SHOWN = 10_000;

export const resultRoutes: readonly RouteSpec[] = BASES.flatMap((base) => {
  const path = base as Base;
  return [
    route({
      method: 'GET',
      path: `${path}/test-case-runs`,
      summary: 'Test case results of a device session',
      tags: TAGS,
      answers: { 200: TestCaseRunList },
      list: TEST_CASE_RUNS,
      handle: async ({ ctx, user, params }) =>
        whole((await testCaseRunViews(ctx, user, idOf(params), scopeOf(params))).map(presentTestCaseRun)),
    }),
    route({
      method: 'GET',
      path: `${path}/performance`,
      summary: 'CPU (0..1) and memory (KB) samples of the app under test: a plain JSON array',
      tags: TAGS,
      answers: { 200: ApiPerformance },
      handle: async ({ ctx, user, params }) =>
        ok(presentSamples(await performance(ctx, user, idOf(params), scopeOf(params)))),
    }),
    route({
      method: 'GET',
      path: `${path}/screenshots`,
      summary: 'Screenshots of a device session',
      tags: TAGS,
      answers: { 200: ScreenshotList },
      list: SCREENSHOTS,
      handle: async ({ ctx, user, params, present }) => {
        const files = await outputFiles(ctx, user, idOf(params), ['screenshot'], scopeOf(params));
        return whole(files.map((file) => presentScreenshot(file, present)));
      },
    }),
    route({
      method: 'GET',
      path: `${path}/screenshots/:fileId`,
      summary: 'One screenshot: the image',
      tags: TAGS,
      answers: { 200: bytesOf('image/png', 'The image') },
      handle: async ({ ctx, user, params }) =>
        bytes(fileAnswer(await openOutput(ctx, user, idOf(params), params.fileId, scopeOf(params), 'screenshot'))),
    }),
    route({
      method: 'GET',
      path: `${path}/output-file-set/files`,
      summary: `Output files (tags: ${OUTPUT_TAGS.join(', ')}; filter with tag[]=)`,
      tags: TAGS,
      answers: { 200: FileList },
      input: Type.Object({ tag: Type.Optional(Type.Array(Type.String({ maxLength: 50 }), { maxItems: 20 })) }),
      list: OUTPUT_FILES,
      handle: async ({ ctx, user, params, input, present }) => {
        const tags = input.tag ?? [];
        const files = await outputFiles(ctx, user, idOf(params), tags, scopeOf(params));
        // `tag` narrows the list like a filter, so the page links repeat it.
        return whole(
          files.map((file) => presentFile(file, present)),
          { tag: tags },
        );
      },
    }),
    route({
      method: 'GET',
      path: `${path}/output-file-set/files/:fileId/file`,
      summary: 'Download one output file',
      tags: TAGS,
      answers: {
        200: bytesOf(
          'application/octet-stream',
          'The stored bytes, unchanged; answered with the type the file was stored with',
        ),
      },
      handle: async ({ ctx, user, params }) =>
        bytes(fileAnswer(await openOutput(ctx, user, idOf(params), params.fileId, scopeOf(params)))),
    }),
    route({
      method: 'GET',
      path: `${path}/logs`,
      summary: 'The device session log (text)',
      tags: TAGS,
      answers: { 200: bytesOf('text/plain', 'The log, as the device host wrote it') },
      handle: async ({ ctx, user, params }) => {
        const logs = await logFiles(ctx, user, idOf(params), scopeOf(params));
        const length = logs.reduce((sum, log) => sum + log.file.size, 0);
        return bytes({
          open: () =>
            Readable.from(
              (async function* () {
                for (const log of logs) yield* log.open();
              })(),
            ),
          ranged: false,
          contentType: 'text/plain; charset=utf-8',
          length,
          fileName: `device-session-${idOf(params)}.log`,
          inline: true,
        });
      },
    }),
    route({
      method: 'GET',
      path: `${path}/junit.xml`,
      summary: 'The test cases as one JUnit XML report',
      tags: TAGS,
      answers: { 200: bytesOf('application/xml', 'A JUnit XML report') },
      handle: async ({ ctx, user, params }) => {
        const view = await getDeviceRun(ctx, user, idOf(params), scopeOf(params));
        const { run } = await requireRun(ctx, user, view.deviceRun.testRunId, undefined, 'read');
        const cases = await testCaseRuns(ctx, user, view.deviceRun.id);
        return text(
          'application/xml; charset=utf-8',
          junitReport(`${displayName(run)} on ${view.device.displayName}`, cases, view.deviceRun.startTime),
        );
      },
    }),
    route({
      method: 'GET',
      path: `${path}/commands`,
      summary: 'The WebDriver command log of an Appium client side session (docs/api.md#appium-client-side)',
      tags: TAGS,
      answers: { 200: CommandList },
      list: itemList(ApiDeviceSessionCommand, { entity: 'commands', sort: BY_ID, search: ['method', 'uri'] }),
      handle: async ({ ctx, user, params }) => {
        const log = await deviceRunCommands(
          ctx,
          user,
          idOf(params),
          { offset: 0, limit: COMMANDS_SHOWN },
          scopeOf(params),
        );
        return whole(log.rows.map((command) => presentCommand(command, log.sessionId)));
      },
    }),
    route({
      method: 'GET',
      path: `${path}/steps`,
      summary: 'The step timeline of a device session',
      tags: TAGS,
      answers: { 200: StepList },
      list: STEPS,
      handle: async ({ ctx, user, params }) =>
        whole((await deviceRunSteps(ctx, user, idOf(params), scopeOf(params))).map(presentStep)),
    }),
  ];
});
