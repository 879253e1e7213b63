/**
 * Zips of results and the file sets of a device session (docs/api.md#result-zips): a run's
 * screenshots, logs, files and performance as a stored zip file, a session's output and input
 * files as zips streamed as they are written, the input file set, and one output file's record.
 */
import Type from 'typebox';
import {
  RUN_ZIP_KINDS,
  createRunZip,
  inputFiles,
  inputFilesZip,
  outputFile,
  outputFilesZip,
  resultDataZip,
} from '../../services/result-zips.ts';
import { zipAnswer } from '../downloads.ts';
import { ApiUserFile, presentFile } from '../present/file.ts';
import { itemList, listSchema } from '../present/list.ts';
import { type RouteSpec, bytes, bytesOf, created, ok, route, whole } from '../route.ts';
import { BASES, type Base, RUN_PATHS, type RunPath, idOf, scopeOf } from './session-paths.ts';

const TAGS = ['Results'];
const FileList = listSchema(ApiUserFile);
const INPUT_FILES = itemList(ApiUserFile, { entity: 'files', sort: [], search: ['name'] });
const ZIP = bytesOf('application/zip', 'A zip, written as it is sent (chunked, no Content-Length)');

const TagInput = Type.Object({
  tag: Type.Optional(Type.Array(Type.String({ maxLength: 50 }), { maxItems: 20 })),
});

const runZipRoutes = RUN_PATHS.flatMap((path) =>
  RUN_ZIP_KINDS.map((kind) =>
    route({
      method: 'POST',
      path: `${path as RunPath}/${kind}.zip`,
      summary: `Zip the run's ${kind} (of its current device sessions, or those in deviceRunIds[]) into a file of yours; answers the file (download it at /files/{id}/file)`,
      tags: TAGS,
      answers: { 201: ApiUserFile },
      input: Type.Object({ deviceRunIds: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 1000 })) }),
      handle: async ({ ctx, user, params, input, present }) =>
        created(
          presentFile(await createRunZip(ctx, user, params.runId, params.projectId, kind, input.deviceRunIds), present),
        ),
    }),
  ),
);

const fileSetRoutes = BASES.flatMap((base) => {
  const path = base as Base;
  return [
    route({
      method: 'GET',
      path: `${path}/output-file-set/files.zip`,
      summary: 'All output files of a device session as one zip (only those tagged, with tag[]=)',
      tags: TAGS,
      answers: { 200: ZIP },
      input: TagInput,
      handle: async ({ ctx, user, params, input }) =>
        bytes(zipAnswer(await outputFilesZip(ctx, user, idOf(params), input.tag ?? [], scopeOf(params)))),
    }),
    route({
      method: 'GET',
      path: `${path}/result-data.zip`,
      summary:
        'Everything the device session produced as one zip: its output files, and performance.csv of its samples',
      tags: TAGS,
      answers: { 200: ZIP },
      handle: async ({ ctx, user, params }) =>
        bytes(zipAnswer(await resultDataZip(ctx, user, idOf(params), scopeOf(params)))),
    }),
    route({
      method: 'GET',
      path: `${path}/output-file-set/files/:fileId`,
      summary: 'One output file of a device session: its record',
      tags: TAGS,
      answers: { 200: ApiUserFile },
      handle: async ({ ctx, user, params, present }) =>
        ok(presentFile(await outputFile(ctx, user, idOf(params), params.fileId, scopeOf(params)), present)),
    }),
    route({
      method: 'GET',
      path: `${path}/input-file-set/files`,
      summary: 'The files the device session ran with (application, tests, data), in the order the run named them',
      tags: TAGS,
      answers: { 200: FileList },
      list: INPUT_FILES,
      handle: async ({ ctx, user, params, present }) =>
        whole((await inputFiles(ctx, user, idOf(params), scopeOf(params))).map((file) => presentFile(file, present))),
    }),
    route({
      method: 'GET',
      path: `${path}/input-file-set/files.zip`,
      summary: 'The files the device session ran with, as one zip',
      tags: TAGS,
      answers: { 200: ZIP },
      handle: async ({ ctx, user, params }) =>
        bytes(zipAnswer(await inputFilesZip(ctx, user, idOf(params), scopeOf(params)))),
    }),
  ];
});

export const resultZipRoutes: readonly RouteSpec[] = [...runZipRoutes, ...fileSetRoutes];
