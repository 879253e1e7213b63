/** The recorder tool (domain/recordings.ts; docs/api.md "Recorder tool"): our own routes. */
import Type from 'typebox';
import { RECORDING_LIST } from '../../domain/recordings.ts';
import {
  authorizeRecorder,
  currentRecorderAuthorization,
  endRecorderAuthorization,
  finishRecording,
  getRecording,
  listRecordings,
  recordStep,
  recordingSteps,
  startRecording,
} from '../../services/recordings.ts';
import { itemList, listSchema, storedList } from '../present/list.ts';
import {
  ApiNewRecorderAuthorization,
  ApiRecorderAuthorization,
  ApiRecording,
  ApiRecordingStep,
  presentRecorderAuthorization,
  presentRecording,
  presentRecordingStep,
} from '../present/recording.ts';
import { type RouteSpec, created, noContent, ok, page, route, whole } from '../route.ts';
import { NoInput, Scalar, Text } from '../schemas.ts';

const TAGS = ['Recorder'];
const AUTHORIZATION = '/me/recorder/authorizations';
const RECORDING = '/me/recordings/:recordingId';

export const recorderRoutes: readonly RouteSpec[] = [
  route({
    method: 'POST',
    path: AUTHORIZATION,
    summary: 'Authorize a recorder client: its recordings have no step limit; the previous authorization ends',
    tags: TAGS,
    answers: { 201: ApiNewRecorderAuthorization },
    input: NoInput,
    handle: async ({ ctx, user }) => {
      const { authorization, token } = await authorizeRecorder(ctx, user);
      return created(presentRecorderAuthorization(authorization, token));
    },
  }),
  route({
    method: 'GET',
    path: `${AUTHORIZATION}/current`,
    summary: "The account's current recorder authorization (404 when there is none)",
    tags: TAGS,
    answers: { 200: ApiRecorderAuthorization },
    handle: async ({ ctx, user }) => ok(presentRecorderAuthorization(await currentRecorderAuthorization(ctx, user))),
  }),
  route({
    method: 'DELETE',
    path: `${AUTHORIZATION}/current`,
    summary: "End the account's recorder authorization: its recordings are limited again",
    tags: TAGS,
    answers: { 204: 'empty' },
    handle: async ({ ctx, user }) => {
      await endRecorderAuthorization(ctx, user);
      return noContent();
    },
  }),
  route({
    method: 'POST',
    path: '/me/recordings',
    summary: "Start a recording; with the authorization token of the account's current recorder it has no step limit",
    tags: TAGS,
    answers: { 201: ApiRecording },
    input: Type.Object({
      name: Type.Optional(Text('Name of the recording', 255)),
      osType: Type.Optional(Text('ANDROID or IOS', 20)),
      authorizationToken: Type.Optional(Text('Token from POST /me/recorder/authorizations', 200)),
    }),
    handle: async ({ ctx, user, input, present }) =>
      created(presentRecording(await startRecording(ctx, user, input), present)),
  }),
  route({
    method: 'GET',
    path: '/me/recordings',
    summary: "List the user's recordings",
    tags: TAGS,
    answers: { 200: listSchema(ApiRecording) },
    list: storedList(RECORDING_LIST, ['selfURI']),
    handle: async ({ ctx, user, present, list }) => {
      const found = await listRecordings(ctx, user, list);
      return page(
        found.items.map((view) => presentRecording(view, present)),
        found.total,
      );
    },
  }),
  route({
    method: 'GET',
    path: RECORDING,
    summary: 'Read a recording',
    tags: TAGS,
    answers: { 200: ApiRecording },
    handle: async ({ ctx, user, params, present }) =>
      ok(presentRecording(await getRecording(ctx, user, params.recordingId), present)),
  }),
  route({
    method: 'GET',
    path: `${RECORDING}/steps`,
    summary: "A recording's steps, in order",
    tags: TAGS,
    answers: { 200: listSchema(ApiRecordingStep) },
    list: itemList(ApiRecordingStep, { entity: 'recording steps', sort: [], search: [] }),
    handle: async ({ ctx, user, params }) =>
      whole((await recordingSteps(ctx, user, params.recordingId)).map(presentRecordingStep)),
  }),
  route({
    method: 'POST',
    path: `${RECORDING}/steps`,
    summary: 'Record one step; an unauthorized recording is cut at 30 steps (403)',
    tags: TAGS,
    answers: { 201: ApiRecordingStep },
    input: Type.Object({
      action: Type.Optional(Scalar('TAP, LONG_TAP, SWIPE, TYPE, BACK, HOME, WAIT, ASSERT, SCREENSHOT or LAUNCH')),
      target: Type.Optional(Scalar('What the step acts on (an element, coordinates)')),
      value: Type.Optional(Scalar('Text typed, expected value, duration')),
    }),
    handle: async ({ ctx, user, params, input }) =>
      created(presentRecordingStep(await recordStep(ctx, user, params.recordingId, input))),
  }),
  route({
    method: 'POST',
    path: `${RECORDING}/finish`,
    summary: 'Finish a recording',
    tags: TAGS,
    answers: { 200: ApiRecording },
    input: NoInput,
    handle: async ({ ctx, user, params, present }) =>
      ok(presentRecording(await finishRecording(ctx, user, params.recordingId), present)),
  }),
];
