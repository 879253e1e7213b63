import type { UserFile } from '../../domain/files.ts';
import { type PresentContext, userPath } from './context.ts';
import Type from 'typebox';
import { AlwaysNull, Bool, Count, Id, MaybeStr, SelfURI, Str, Time, Url } from './fields.ts';
import { sharingOf } from './sharing.ts';
import { Nested, type Rep, entity, entitySchema } from './representation.ts';

/** What was found in an uploaded file; properties have no resource of their own (selfURI null). */
export const ApiFileProperty = entitySchema('apiFileProperty', { id: Id, selfURI: AlwaysNull, key: Str, value: Str });

export const ApiUserFile = entitySchema('apiUserFile', {
  id: Id,
  selfURI: SelfURI,
  name: Str,
  size: Count,
  mimetype: Str,
  createTime: Time,
  state: Str,
  direction: Str,
  inputType: MaybeStr,
  directUrl: Url,
  iconDirectUrl: Type.Null(),
  duplicate: Bool,
  fileProperties: Type.Array(Nested(ApiFileProperty)),
  tags: Type.Array(Str),
  userId: Id,
  userEmail: MaybeStr,
  shared: Bool,
});

export function presentFile(file: UserFile, context: PresentContext): Rep {
  const base = `${userPath(context)}/files/${file.id}`;
  return entity(ApiUserFile, {
    id: file.id,
    selfURI: base,
    name: file.name,
    size: file.size,
    mimetype: file.mimetype,
    createTime: file.createTime,
    state: file.state,
    direction: file.direction,
    inputType: file.inputType,
    directUrl:
      file.deviceRunId === null
        ? `${context.baseUrl}/api/v2${base}/file`
        : `${context.baseUrl}/api/v2${userPath(context)}/device-sessions/${file.deviceRunId}/output-file-set/files/${file.id}/file`,
    iconDirectUrl: null,
    duplicate: file.duplicate,
    fileProperties: Object.entries(file.properties).map(([key, value], index) =>
      entity(ApiFileProperty, { id: index + 1, selfURI: null, key, value }),
    ),
    tags: [...file.tags],
    userId: file.userId,
    userEmail: file.userId === context.user?.id ? context.user.email : null,
    shared: sharingOf(file.userId, context).shared,
  });
}
