/**
 * Files: uploads stream into the blob store (memory stays flat whatever the size), are inspected
 * (APK, IPA, test package, data) and recorded; downloads stream the stored bytes back unchanged.
 * Nothing is recorded for an upload that is refused, cut off or too large.
 */
import type { Readable } from 'node:stream';
import { InvalidParameterError, NotFoundError, PayloadTooLargeError } from '../domain/errors.ts';
import { type ProjectFileSlot, type UserFile, inputTypeOfSlot, safeFileName } from '../domain/files.ts';
import type { FILE_LIST } from '../domain/files.ts';
import type { ListQuery } from '../domain/list-query.ts';
import type { User } from '../domain/users.ts';
import { InspectionError, inspectFile } from '../files/inspect/index.ts';
import { BlobTooLargeError, type StoredBlob } from '../store/blobs.ts';
import type { Context } from './context.ts';
import { requireProject } from './projects.ts';
import type { Page } from './views.ts';

type FileField = keyof (typeof FILE_LIST)['fields'];

export interface Upload {
  readonly stream: Readable;
  readonly fileName: string;
  /** Set by the multipart parser when the part was cut at the size limit. */
  readonly truncated: () => boolean;
}

/** Stores an upload; for a legacy slot the caller has checked that the project is the user's. */
export async function uploadFile(ctx: Context, user: User, upload: Upload, legacy?: { projectId: number; slot: ProjectFileSlot }): Promise<UserFile> {
  const name = safeFileName(upload.fileName);
  const blob = await receive(ctx, upload);
  try {
    const inspection = await ctx.blobs.withLocalFile(blob.key, (filePath) => inspectFile(filePath, name, ctx.limits.zip));
    if (legacy !== undefined) checkSlot(legacy.slot, inspection.inputType, name);
    const duplicate = await ctx.store.files.userHasSha(user.id, blob.sha256);
    return await ctx.store.files.insert({
      userId: user.id,
      projectId: legacy?.projectId ?? null,
      projectSlot: legacy?.slot ?? null,
      name,
      size: blob.size,
      mimetype: inspection.mimetype,
      sha256: blob.sha256,
      blobKey: blob.key,
      state: 'READY',
      direction: 'INPUT',
      inputType: legacy === undefined ? inspection.inputType : inputTypeOfSlot(legacy.slot),
      osType: inspection.osType,
      duplicate,
      properties: inspection.properties,
      tags: [],
      createTime: ctx.clock(),
    });
  } catch (error) {
    await forgetBlob(ctx, blob.key);
    if (error instanceof InspectionError) throw new InvalidParameterError('file', error.message);
    throw error;
  }
}

async function receive(ctx: Context, upload: Upload): Promise<StoredBlob> {
  let blob: StoredBlob;
  try {
    blob = await ctx.blobs.put(upload.stream, { maxBytes: ctx.limits.maxUploadBytes });
  } catch (error) {
    if (error instanceof BlobTooLargeError || upload.truncated()) {
      throw new PayloadTooLargeError(`The file is larger than the upload limit of ${ctx.limits.maxUploadBytes} bytes`);
    }
    throw new InvalidParameterError('file', 'The upload was cut off before it finished; nothing was stored');
  }
  if (upload.truncated()) {
    await forgetBlob(ctx, blob.key);
    throw new PayloadTooLargeError(`The file is larger than the upload limit of ${ctx.limits.maxUploadBytes} bytes`);
  }
  if (blob.size === 0) {
    await forgetBlob(ctx, blob.key);
    throw new InvalidParameterError('file', 'The uploaded file is empty');
  }
  return blob;
}

/** Legacy slots take what their name says: an app in `application`, tests in `test`. */
function checkSlot(slot: ProjectFileSlot, inputType: string, name: string): void {
  if (slot === 'application' && inputType !== 'APPLICATION') {
    throw new InvalidParameterError('file', `${name} is not an application (APK or IPA); upload it as test or data`);
  }
  if (slot === 'test' && inputType !== 'TEST') {
    throw new InvalidParameterError('file', `${name} is not a test file (a test APK, or a zip with run-tests.sh)`);
  }
}

async function forgetBlob(ctx: Context, key: string): Promise<void> {
  if (!(await ctx.store.files.blobInUse(key))) await ctx.blobs.delete(key);
}

export async function requireFile(ctx: Context, user: User, id: number): Promise<UserFile> {
  const file = await ctx.store.files.findOwned(user.id, id);
  if (file === undefined) throw new NotFoundError('File', id);
  return file;
}

export function listFiles(ctx: Context, user: User, query: ListQuery<FileField>): Promise<Page<UserFile>> {
  return ctx.store.files.list(user.id, query);
}

export async function deleteFile(ctx: Context, user: User, id: number): Promise<void> {
  const file = await requireFile(ctx, user, id);
  await ctx.store.files.delete(file.id);
  await forgetBlob(ctx, file.blobKey);
}

/** The newest file of a legacy project slot. */
export async function projectFile(ctx: Context, user: User, projectId: number, slot: ProjectFileSlot): Promise<UserFile> {
  await requireProject(ctx, user, projectId);
  const file = await ctx.store.files.latestOfProject(projectId, slot);
  if (file === undefined) throw new NotFoundError(`The ${slot} file of project ${projectId}`);
  return file;
}

export interface Download {
  readonly file: UserFile;
  readonly stream: Readable;
}

export function openFile(ctx: Context, file: UserFile): Download {
  return { file, stream: ctx.blobs.read(file.blobKey) };
}
