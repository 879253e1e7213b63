import type { Framework } from '../../domain/frameworks.ts';
import { type Rep, rep } from './representation.ts';

export function presentFramework(framework: Framework): Rep {
  return rep('apiFramework', {
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
