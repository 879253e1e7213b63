/**
 * Hostile input, generated, on PostgreSQL, the writes (every method but GET):
 * test/support/hostile-suite.ts, in a file of its own so that it runs beside the reads
 * (hostile-input-postgres-reads.test.ts) and the SQLite drive (hostile-input.test.ts) on other workers.
 */
import { describe } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { describeHostileInput } from '../support/hostile-suite.ts';

describe.runIf(ENGINES.includes('postgres'))('on PostgreSQL', () => describeHostileInput('postgres', 'writes'));
