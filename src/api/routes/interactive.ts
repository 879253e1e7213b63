/**
 * Interactive sessions (docs/api.md#interactive-sessions): reserve a device, watch its screen,
 * send it input, release it. Only the session's holder reaches it (another user's id is a 404);
 * an admin may also release anyone's.
 */
import { Readable } from 'node:stream';
import Type from 'typebox';
import { INPUT_ACTIONS, KEYS, ORIENTATIONS } from '../../domain/interactive.ts';
import {
  readSessionLog,
  releaseInteractiveSession,
  sendInput,
  startInteractiveSession,
  takeScreenshot,
  watchSession,
} from '../../services/interactive.ts';
import { ApiDeviceSession, presentDeviceSession } from '../present/device-run.ts';
import { ApiDeviceSessionCommand, presentCommand } from '../present/webdriver-command.ts';
import { type RouteSpec, bytes, bytesOf, created, ok, route } from '../route.ts';
import { Scalar } from '../schemas.ts';

const TAGS = ['Interactive sessions'];
const SESSION_PATHS = ['/me/device-sessions/:deviceSessionId', '/device-sessions/:deviceSessionId'] as const;
type SessionPath = '/me/device-sessions/:deviceSessionId';
const BOUNDARY = 'devicecloud-frame';
const Seconds = (description: string) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 24 * 3600, description }));
const Count = (description: string) => Type.Optional(Type.Integer({ minimum: 1, description }));
/** The streams a viewer holds open never end on their own: nothing needs their signal sooner. */
const UNTIL_SESSION_ENDS = new AbortController().signal;

export const interactiveRoutes: readonly RouteSpec[] = [
  route({
    method: 'POST',
    path: '/me/device-sessions',
    summary: 'Reserve a device for an interactive session; it queues like a run (plan priority)',
    tags: TAGS,
    answers: { 201: ApiDeviceSession },
    input: Type.Object({
      deviceId: Count('The device to reserve (GET /devices)'),
      deviceModelId: Count("The same as deviceId (the established service's name)"),
      timeout: Seconds("Longest the session may last; default and maximum: the plan's test timeout"),
      idleTimeout: Seconds('The session ends after this long without input (default 300)'),
    }),
    handle: async ({ ctx, user, input, present }) =>
      created(presentDeviceSession(await startInteractiveSession(ctx, user, input), present)),
  }),
  ...SESSION_PATHS.flatMap((path) => [
    route({
      method: 'POST',
      path: `${path as SessionPath}/release`,
      summary: 'End an interactive session (admins: anyone’s); its device is cleaned',
      tags: TAGS,
      answers: { 200: ApiDeviceSession },
      input: Type.Object({}),
      handle: async ({ ctx, user, params, present }) =>
        ok(presentDeviceSession(await releaseInteractiveSession(ctx, user, params.deviceSessionId), present)),
    }),
    route({
      method: 'POST',
      path: `${path as SessionPath}/input`,
      summary: 'Send input to the device of an interactive session; answers the logged command once done',
      tags: TAGS,
      answers: { 200: ApiDeviceSessionCommand },
      input: Type.Object({
        action: Type.Optional(Type.String({ maxLength: 40, description: INPUT_ACTIONS.join(', ') })),
        x: Type.Optional(Scalar('tap, longPress, swipe: the point, in screen pixels')),
        y: Type.Optional(Scalar('tap, longPress, swipe: the point, in screen pixels')),
        toX: Type.Optional(Scalar('swipe: where it ends')),
        toY: Type.Optional(Scalar('swipe: where it ends')),
        durationMs: Type.Optional(Scalar('longPress, swipe: how long, in milliseconds')),
        text: Type.Optional(Type.String({ maxLength: 4000, description: 'text: what to type (500 characters)' })),
        key: Type.Optional(Type.String({ maxLength: 40, description: `key: ${KEYS.join(', ')}` })),
        orientation: Type.Optional(Type.String({ maxLength: 40, description: `rotate: ${ORIENTATIONS.join(', ')}` })),
        fileId: Type.Optional(Scalar('install: an app uploaded with POST /me/files')),
        url: Type.Optional(Type.String({ maxLength: 4000, description: 'openUrl: an http(s) URL' })),
      }),
      handle: async ({ ctx, user, params, input }) =>
        ok(presentCommand(await sendInput(ctx, user, params.deviceSessionId, input, UNTIL_SESSION_ENDS), null)),
    }),
    route({
      method: 'POST',
      path: `${path as SessionPath}/screenshot`,
      summary: 'A screenshot of the device of an interactive session, taken now',
      tags: TAGS,
      answers: { 200: bytesOf('image/png', 'The screen as a PNG image') },
      input: Type.Object({}),
      handle: async ({ ctx, user, params }) => {
        const png = await takeScreenshot(ctx, user, params.deviceSessionId, UNTIL_SESSION_ENDS);
        return bytes({
          open: () => Readable.from([png]),
          ranged: false,
          contentType: 'image/png',
          length: png.length,
          fileName: `screenshot-${params.deviceSessionId}.png`,
          inline: true,
        });
      },
    }),
    route({
      method: 'GET',
      path: `${path as SessionPath}/logcat`,
      summary: "The device's log (logcat) of an interactive session: from its start, then each line as it comes",
      tags: TAGS,
      answers: { 200: bytesOf('text/plain', 'Lines of the log until the session ends') },
      handle: async ({ ctx, user, params }) => {
        const log = await readSessionLog(ctx, user, params.deviceSessionId);
        return bytes({
          open: () => {
            const stop = new AbortController();
            const text = async function* () {
              for await (const lines of log.lines(stop.signal)) yield Buffer.from(`${lines.join('\n')}\n`);
            };
            const stream = Readable.from(text());
            stream.once('close', () => stop.abort());
            return stream;
          },
          ranged: false,
          contentType: 'text/plain; charset=utf-8',
          length: null,
          fileName: `logcat-${params.deviceSessionId}.txt`,
          inline: true,
        });
      },
    }),
    route({
      method: 'GET',
      path: `${path as SessionPath}/live`,
      summary: 'The live screen of an interactive session: a multipart stream of its frames, each as it changes',
      tags: TAGS,
      answers: {
        200: bytesOf(
          `multipart/x-mixed-replace; boundary=${BOUNDARY}`,
          'Frames (image/png parts) until the session ends; an <img> shows it as it changes',
        ),
      },
      handle: async ({ ctx, user, params }) => {
        const watch = await watchSession(ctx, user, params.deviceSessionId);
        return bytes({
          open: () => {
            const stop = new AbortController();
            // Each part is closed by the next boundary, sent with it: browsers show a part once
            // they see the boundary after it, and the next frame may be a while coming.
            const parts = async function* () {
              yield Buffer.from(`--${BOUNDARY}\r\n`);
              for await (const frame of watch.frames(stop.signal)) {
                yield Buffer.from(
                  `Content-Type: ${frame.mediaType}\r\nContent-Length: ${frame.bytes.length}\r\n` +
                    `X-Frame-Seq: ${frame.seq}\r\nX-Frame-Time: ${frame.frameTime}\r\n\r\n`,
                );
                yield frame.bytes;
                yield Buffer.from(`\r\n--${BOUNDARY}\r\n`);
              }
            };
            const stream = Readable.from(parts());
            stream.once('close', () => stop.abort());
            return stream;
          },
          ranged: false,
          contentType: `multipart/x-mixed-replace; boundary=${BOUNDARY}`,
          length: null,
          fileName: `live-${params.deviceSessionId}`,
          inline: true,
        });
      },
    }),
  ]),
];
