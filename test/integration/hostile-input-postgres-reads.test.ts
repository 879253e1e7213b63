/**
 * Hostile input, generated, on PostgreSQL, the reads (GET): test/support/hostile-suite.ts, in a file
 * of its own so that it runs beside the writes (hostile-input-postgres-writes.test.ts) and the
 * SQLite drive (test/integration/hostile-input.test.ts) on other workers.
 */
import { describe } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { describeHostileInput } from '../support/hostile-suite.ts';

describe.runIf(ENGINES.includes('postgres'))('on PostgreSQL', () => describeHostileInput('postgres', 'reads'));
