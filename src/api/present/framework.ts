import type { Framework } from '../../domain/frameworks.ts';
import Type from 'typebox';
import { Bool, Id, MaybeStr, SelfURI, Str } from './fields.ts';
import { type Rep, entity, entitySchema } from './representation.ts';

export const ApiFramework = entitySchema('apiFramework', {
  id: Id,
  selfURI: SelfURI,
  name: Str,
  osType: Str,
  type: Type.String({ description: 'SERVER_SIDE or CRAWLER' }),
  description: Str,
  requiredAppExtensions: Type.Array(Str),
  requiredTestExtensions: Type.Array(Str),
  requiresSourceCode: Bool,
  canRunFromUI: Bool,
  forProjects: Type.Array(Str),
  retryable: Bool,
  available: Bool,
  unavailableReason: MaybeStr,
});

export function presentFramework(framework: Framework): Rep {
  return entity(ApiFramework, {
    id: framework.id,
    selfURI: `/frameworks/${framework.id}`,
    name: framework.name,
    osType: framework.osType,
    type: framework.kind.toUpperCase().replace('-', '_'),
    description: framework.description,
    requiredAppExtensions: [...framework.requiredAppExtensions],
    requiredTestExtensions: [...framework.requiredTestExtensions],
    requiresSourceCode: framework.requiresSourceCode,
    canRunFromUI: framework.canRunFromUI,
    forProjects: [...framework.forProjects],
    retryable: framework.retryable,
    available: framework.unavailableReason === null,
    unavailableReason: framework.unavailableReason,
  });
}
