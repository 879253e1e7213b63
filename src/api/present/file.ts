import type { UserFile } from '../../domain/files.ts';
import { type PresentContext, userPath } from './context.ts';
import { type Rep, rep } from './representation.ts';

export function presentFile(file: UserFile, context: PresentContext): Rep {
  const base = `${userPath(context)}/files/${file.id}`;
  return rep('apiUserFile', {
    id: file.id,
    selfURI: base,
    name: file.name,
    size: file.size,
    mimetype: file.mimetype,
    createTime: file.createTime,
    state: file.state,
    direction: file.direction,
    inputType: file.inputType,
    directUrl: file.deviceRunId === null ? `${context.baseUrl}/api/v2${base}/file` : `${context.baseUrl}/api/v2${userPath(context)}/device-sessions/${file.deviceRunId}/output-file-set/files/${file.id}/file`,
    iconDirectUrl: null,
    duplicate: file.duplicate,
    fileProperties: Object.entries(file.properties).map(([key, value], index) => rep('apiFileProperty', { id: index + 1, key, value })),
    tags: [...file.tags],
  });
}
