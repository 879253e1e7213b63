/**
 * The chaos suite's faults scenario in its quick form, on SQLite (`npm run chaos` runs it longer):
 * real server and agent processes killed with SIGKILL during uploads, run starts and result posts,
 * an agent killed mid-run. Nothing may be lost and nothing may break.
 */
import { describe } from 'vitest';
import { faultsTest } from '../support/chaos.ts';

describe('faults (sqlite)', () => faultsTest('sqlite'));
