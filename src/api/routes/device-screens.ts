/**
 * The devices page's live thumbnails (docs/api.md#device-screens): the busy devices whose session
 * the user may see, each with its newest picture, and the newest frame of a session as an image.
 */
import { Readable } from 'node:stream';
import Type from 'typebox';
import { listDeviceScreens, newestFrame } from '../../services/device-screens.ts';
import { ApiDeviceScreen, presentDeviceScreen } from '../present/device-screen.ts';
import { itemList, listSchema } from '../present/list.ts';
import { type RouteSpec, bytes, bytesOf, route, whole } from '../route.ts';

const TAGS = ['Interactive sessions'];

export const deviceScreenRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me/device-screens',
    summary: 'The busy devices whose session you may see, each with its newest picture',
    tags: TAGS,
    answers: { 200: listSchema(ApiDeviceScreen) },
    list: itemList(ApiDeviceScreen, {
      entity: 'device screens',
      sort: [{ field: 'deviceId', direction: 'asc' }],
      search: [],
    }),
    handle: async ({ ctx, user, present }) =>
      whole((await listDeviceScreens(ctx, user)).map((screen) => presentDeviceScreen(screen, present))),
  }),
  ...(['/me/device-sessions/:deviceSessionId', '/device-sessions/:deviceSessionId'] as const).map((path) =>
    route({
      method: 'GET',
      path: `${path as '/me/device-sessions/:deviceSessionId'}/frame`,
      summary: "The newest frame of a session's screen, as an image (404 while it has none)",
      tags: TAGS,
      answers: { 200: bytesOf('image/png', 'The frame') },
      input: Type.Object({
        seq: Type.Optional(
          Type.Integer({
            minimum: 0,
            description: 'The frame number a device screen named: gives each frame its own URL; the newest is answered',
          }),
        ),
      }),
      handle: async ({ ctx, user, params }) => {
        const frame = await newestFrame(ctx, user, params.deviceSessionId);
        return bytes({
          open: () => Readable.from([frame.bytes]),
          ranged: false,
          contentType: frame.mediaType,
          length: frame.bytes.length,
          fileName: `frame-${params.deviceSessionId}-${frame.seq}.png`,
          inline: true,
        });
      },
    }),
  ),
];
