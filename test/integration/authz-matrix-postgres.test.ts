/**
 * The authorization matrix on PostgreSQL: test/support/authz-suite.ts, in a file of its own so that
 * it runs beside the SQLite matrix (test/integration/authz-matrix.test.ts) on another worker.
 */
import { describe } from 'vitest';
import { describeAuthzMatrix } from '../support/authz-suite.ts';
import { ENGINES } from '../support/engines.ts';

describe.runIf(ENGINES.includes('postgres'))('on PostgreSQL', () => describeAuthzMatrix('postgres'));
