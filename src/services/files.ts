/**
 * Files: uploads stream into the blob store (memory stays flat whatever the size), are inspected
 * (APK, IPA, test package, data) and recorded; downloads stream the stored bytes back unchanged.
 * Nothing is recorded for an upload that is refused, cut off, too large or beyond the user's quota.
 */
import type { Readable } from 'node:stream';
import { checkFileName } from '../domain/edits.ts';
import { InvalidParameterError, NotFoundError, PayloadTooLargeError } from '../domain/errors.ts';
import { type ProjectFileSlot, type UserFile, inputTypeOfSlot, safeFileName } from '../domain/files.ts';
import type { FILE_LIST } from '../domain/files.ts';
import type { ListQuery } from '../domain/list-query.ts';
import { type Storage, formatBytes } from '../domain/storage.ts';
import type { User } from '../domain/users.ts';
import { InspectionError, inspectFile } from '../files/inspect/index.ts';
import { BlobTooLargeError, type ByteRange, type StoredBlob } from '../store/blobs.ts';
import type { Context } from './context.ts';
import { requireProject } from './projects.ts';
import { checkWithinQuota, quotaExceeded, roomFor, streamLimit } from './storage.ts';
import type { Page } from './views.ts';

type FileField = keyof (typeof FILE_LIST)['fields'];

export interface Upload {
  readonly stream: Readable;
  readonly fileName: string;
  /** Set by the multipart parser when the part was cut at the size limit. */
  readonly truncated: () => boolean;
}

/**
 * Stores an upload; for a legacy slot the caller has checked that the project is the user's. The
 * user's storage quota is checked before, while and after the bytes arrive (services/storage.ts).
 */
export async function uploadFile(
  ctx: Context,
  user: User,
  upload: Upload,
  legacy?: { projectId: number; slot: ProjectFileSlot },
): Promise<UserFile> {
  const name = safeFileName(upload.fileName);
  let room;
  try {
    room = await roomFor(ctx, user, name);
  } catch (error) {
    upload.stream.resume();
    throw error;
  }
  const blob = await receive(ctx, upload, room);
  try {
    const inspection = await ctx.blobs.withLocalFile(blob.key, (filePath) =>
      inspectFile(filePath, name, ctx.limits.zip),
    );
    if (legacy !== undefined) checkSlot(legacy.slot, inspection.inputType, name);
    return await ctx.store.transaction(async (store) => {
      const duplicate = await store.files.userHasSha(user.id, blob.sha256);
      const file = await store.files.insert({
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
      await checkWithinQuota(store, user, name, blob.size);
      return file;
    });
  } catch (error) {
    await forgetBlob(ctx, blob.key);
    if (error instanceof InspectionError) throw new InvalidParameterError('file', error.message);
    throw error;
  }
}

async function receive(
  ctx: Context,
  upload: Upload,
  room: { storage: Storage; remaining: number },
): Promise<StoredBlob> {
  const { maxBytes, quotaBound } = streamLimit(ctx, room.remaining);
  let blob: StoredBlob;
  try {
    blob = await ctx.blobs.put(upload.stream, { maxBytes });
  } catch (error) {
    if (error instanceof BlobTooLargeError && quotaBound) {
      throw quotaExceeded(
        room.storage,
        `The file is larger than the ${formatBytes(room.remaining)} (${room.remaining} bytes) left`,
      );
    }
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

/** Deletes a blob no file record refers to any more (the same bytes may back several files). */
export async function forgetBlob(ctx: Context, key: string): Promise<void> {
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

/** Renames one of the user's files, keeping its extension (docs/api.md#renaming-runs-and-files). */
export async function renameFile(ctx: Context, user: User, id: number, name: string | undefined): Promise<UserFile> {
  const file = await requireFile(ctx, user, id);
  const newName = checkFileName(name, file.name);
  await ctx.store.files.rename(file.id, newName);
  return { ...file, name: newName };
}

export async function deleteFile(ctx: Context, user: User, id: number): Promise<void> {
  const file = await requireFile(ctx, user, id);
  await ctx.store.files.delete(file.id);
  await forgetBlob(ctx, file.blobKey);
}

/** The newest file of a legacy project slot. */
export async function projectFile(
  ctx: Context,
  user: User,
  projectId: number,
  slot: ProjectFileSlot,
): Promise<UserFile> {
  await requireProject(ctx, user, projectId);
  const file = await ctx.store.files.latestOfProject(projectId, slot);
  if (file === undefined) throw new NotFoundError(`The ${slot} file of project ${projectId}`);
  return file;
}

export interface Download {
  readonly file: UserFile;
  /** The stored bytes, or an inclusive range of them, read when called. */
  open(range?: ByteRange): Readable;
}

export function openFile(ctx: Context, file: UserFile): Download {
  return { file, open: (range) => ctx.blobs.read(file.blobKey, range) };
}
