import type { UserFile } from '../../domain/files.ts';
import { type PresentContext, userPath } from './context.ts';
import Type from 'typebox';
import { Bool, Count, Id, MaybeStr, SelfURI, Str, Time, Url } from './fields.ts';
import { Nested, type Rep, entity, entitySchema } from './representation.ts';

export const ApiFileProperty = entitySchema('apiFileProperty', { id: Id, key: Str, value: Str });

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
      entity(ApiFileProperty, { id: index + 1, key, value }),
    ),
    tags: [...file.tags],
  });
}
