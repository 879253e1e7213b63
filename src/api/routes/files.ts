/** Uploads and downloads: `/me/files` (multipart part `file`) and the legacy per-project slots. */
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { InvalidParameterError, UnsupportedMediaTypeError } from '../../domain/errors.ts';
import { FILE_LIST, PROJECT_FILE_SLOTS, type ProjectFileSlot, type UserFile } from '../../domain/files.ts';
import type { User } from '../../domain/users.ts';
import type { Context } from '../../services/context.ts';
import { deleteFile, listFiles, openFile, projectFile, requireFile, uploadFile } from '../../services/files.ts';
import { requireProject } from '../../services/projects.ts';
import { fileAnswer } from '../downloads.ts';
import { ApiUserFile, presentFile } from '../present/file.ts';
import { listSchema, storedList } from '../present/list.ts';
import { type RouteSpec, bytes, bytesOf, created, noContent, ok, page, route } from '../route.ts';
import { NoInput } from '../schemas.ts';

const TAGS = ['Files'];

/** Reads the multipart part named `file` and stores it. */
async function receiveUpload(
  ctx: Context,
  user: User,
  request: FastifyRequest,
  legacy?: { projectId: number; slot: ProjectFileSlot },
): Promise<UserFile> {
  // Someone else's project is a 404 before a byte of the upload is read.
  if (legacy !== undefined) await requireProject(ctx, user, legacy.projectId);
  let part;
  try {
    part = await request.file({ limits: { fileSize: ctx.limits.maxUploadBytes, files: 1, fields: 20, parts: 25 } });
  } catch (error) {
    if ((error as { code?: string }).code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') {
      throw new UnsupportedMediaTypeError("Uploads are multipart/form-data with the file in a part named 'file'");
    }
    // The multipart plug-in's limits carry their status; the parser's own complaints (no boundary,
    // body ended before a part did) are plain errors about what the client sent.
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status < 500) throw error;
    throw new InvalidParameterError(
      'file',
      `The upload is not valid multipart/form-data (${(error as Error).message}); send the file in a part named 'file'`,
    );
  }
  if (part === undefined)
    throw new InvalidParameterError('file', "The upload has no file: send it in a multipart part named 'file'");
  if (part.fieldname !== 'file') {
    part.file.resume();
    throw new InvalidParameterError('file', `The file part is named '${part.fieldname}'; name it 'file'`);
  }
  return uploadFile(
    ctx,
    user,
    { stream: part.file, fileName: part.filename, truncated: () => part.file.truncated },
    legacy,
  );
}

export const fileRoutes: readonly RouteSpec[] = [
  route({
    method: 'POST',
    path: '/me/files',
    summary: "Upload a file (multipart part 'file'): an APK or IPA, a test package (zip with run-tests.sh), or data",
    tags: TAGS,
    answers: { 201: ApiUserFile },
    upload: true,
    handle: async ({ ctx, user, request, present }) =>
      created(presentFile(await receiveUpload(ctx, user, request), present)),
  }),
  route({
    method: 'GET',
    path: '/me/files',
    summary: 'List uploaded files',
    tags: TAGS,
    answers: { 200: listSchema(ApiUserFile) },
    list: storedList(FILE_LIST, ['selfURI', 'directUrl', 'iconDirectUrl']),
    handle: async ({ ctx, user, present, list }) => {
      const found = await listFiles(ctx, user, list);
      return page(
        found.items.map((file) => presentFile(file, present)),
        found.total,
      );
    },
  }),
  ...['/me/files/:fileId', '/files/:fileId'].flatMap((path) => [
    route({
      method: 'GET',
      path: path as '/files/:fileId',
      summary: 'Read a file record',
      tags: TAGS,
      answers: { 200: ApiUserFile },
      handle: async ({ ctx, user, params, present }) =>
        ok(presentFile(await requireFile(ctx, user, params.fileId), present)),
    }),
    route({
      method: 'GET',
      path: `${path as '/files/:fileId'}/file`,
      summary: 'Download the file: the stored bytes, unchanged',
      tags: TAGS,
      answers: {
        200: bytesOf(
          'application/octet-stream',
          'The stored bytes, unchanged; answered with the type the file was stored with',
        ),
      },
      handle: async ({ ctx, user, params }) =>
        bytes(fileAnswer(openFile(ctx, await requireFile(ctx, user, params.fileId)))),
    }),
    route({
      method: 'DELETE',
      path: path as '/files/:fileId',
      summary: 'Delete a file',
      tags: TAGS,
      answers: { 204: 'empty' },
      input: NoInput,
      handle: async ({ ctx, user, params }) => {
        await deleteFile(ctx, user, params.fileId);
        return noContent();
      },
    }),
  ]),
  ...PROJECT_FILE_SLOTS.flatMap((slot) => [
    route({
      method: 'POST',
      path: `/me/projects/:projectId/files/${slot}`,
      summary: `Upload the project's ${slot} file (legacy; a run started with only projectId uses the newest)`,
      tags: TAGS,
      answers: { 201: ApiUserFile },
      upload: true,
      handle: async ({ ctx, user, params, request, present }) =>
        created(presentFile(await receiveUpload(ctx, user, request, { projectId: params.projectId, slot }), present)),
    }),
    route({
      method: 'GET',
      path: `/me/projects/:projectId/files/${slot}`,
      summary: `Download the project's newest ${slot} file (legacy)`,
      tags: TAGS,
      answers: {
        200: bytesOf(
          'application/octet-stream',
          'The stored bytes, unchanged; answered with the type the file was stored with',
        ),
      },
      handle: async ({ ctx, user, params }) =>
        bytes(fileAnswer(openFile(ctx, await projectFile(ctx, user, params.projectId, slot)))),
    }),
  ]),
];
