import type { Framework } from '../../domain/frameworks.ts';
import Type from 'typebox';
import { AlwaysNull, Bool, Id, MaybeStr, SelfURI, Str } from './fields.ts';
import { type Rep, entity, entitySchema } from './representation.ts';

export const ApiFramework = entitySchema('apiFramework', {
  id: Id,
  selfURI: SelfURI,
  name: Str,
  osType: Str,
  type: Type.String({ description: 'SERVER_SIDE or CRAWLER' }),
  description: Str,
  requiredAppExtensions: Type.String({ description: 'Extensions of the app, joined by commas ("apk"); "" when none' }),
  requiredTestExtensions: Type.String({ description: 'Extensions of the test file, joined by commas; "" when none' }),
  requiredTestFileTags: Str,
  requiresSourceCode: Bool,
  canRunFromUI: Bool,
  forProjects: Type.Boolean({ description: 'Whether runs in projects may use it (all of ours)' }),
  retryable: Bool,
  available: Bool,
  unavailableReason: MaybeStr,
  secured: Bool,
  skipQueue: Bool,
  skipOlderSdk: Bool,
  queueWait: AlwaysNull,
  createTime: AlwaysNull,
  accountId: AlwaysNull,
  accountName: AlwaysNull,
  mainUserEmail: AlwaysNull,
  documentationUrl: AlwaysNull,
  icon: AlwaysNull,
  labelId: AlwaysNull,
  labelName: AlwaysNull,
  sampleApp: AlwaysNull,
  sampleTest: AlwaysNull,
});

export function presentFramework(framework: Framework): Rep {
  return entity(ApiFramework, {
    id: framework.id,
    selfURI: `/frameworks/${framework.id}`,
    name: framework.name,
    osType: framework.osType,
    type: framework.kind.toUpperCase().replace('-', '_'),
    description: framework.description,
    // Strings, as the established API writes them ("apk", "" when no file is needed).
    requiredAppExtensions: framework.requiredAppExtensions.join(','),
    requiredTestExtensions: framework.requiredTestExtensions.join(','),
    requiredTestFileTags: '',
    requiresSourceCode: framework.requiresSourceCode,
    canRunFromUI: framework.canRunFromUI,
    forProjects: framework.forProjects.length > 0,
    retryable: framework.retryable,
    available: framework.unavailableReason === null,
    unavailableReason: framework.unavailableReason,
    // Built in, for every account: no owner, label, sample files or queue of their own.
    secured: false,
    skipQueue: false,
    skipOlderSdk: false,
    queueWait: null,
    createTime: null,
    accountId: null,
    accountName: null,
    mainUserEmail: null,
    documentationUrl: null,
    icon: null,
    labelId: null,
    labelName: null,
    sampleApp: null,
    sampleTest: null,
  });
}
