/**
 * The chaos suite's faults scenario in its quick form, on PostgreSQL (`npm run chaos` runs it
 * longer): real server and agent processes killed with SIGKILL during uploads, run starts and
 * result posts, an agent killed mid-run, PostgreSQL restarted under load. Skipped, with the
 * engines' message, when no PostgreSQL answers.
 */
import { describe } from 'vitest';
import { faultsTest } from '../support/chaos.ts';
import { ENGINES } from '../support/engines.ts';

describe.skipIf(!ENGINES.includes('postgres'))('faults (postgres)', () => faultsTest('postgres'));
