/**
 * Drives generated hostile input (support/hostile.ts) through a harness: every operation, called by
 * a user who owns real data (so ids exist and handlers are reached), each answer judged, and the
 * store compared around every request (row counts of every table, the blob directory with its
 * temporary files, and no committed INSERT/UPDATE/DELETE) so that a refused request provably wrote
 * nothing. Used by test/integration/hostile-input.test.ts and by the chaos suite (more seeds).
 */
import { issueAgentToken } from '../../src/services/agents.ts';
import type { Harness } from './harness.ts';
import { type Operation, generate, operationsOf, problemWith, undocumentedOperations } from './hostile.ts';
import { prng } from './prng.ts';
import { type StoreSnapshot, difference, snapshotter, writesIn } from './snapshot.ts';
import { type World, seedWorld } from './world.ts';

/** Writes after which the world may no longer be whole (a deleted file, a reset key, a demoted admin). */
const DESTRUCTIVE =
  /^DELETE |^(POST|PUT|PATCH) .*(abort|retry|reset-api-key|password|finish|authorizations|admin\/users)|^POST \/api\/v2\/me$/;

export interface HostileReport {
  /** Operations of the OpenAPI document (the rest are the agent protocol, OAuth and sign-in). */
  readonly documented: readonly Operation[];
  readonly operations: number;
  readonly tried: number;
  /** Odd but valid input, answered 2xx. */
  readonly accepted: number;
  readonly reseeded: number;
  readonly failures: readonly string[];
  readonly seconds: number;
}

/**
 * `part` drives some of the operations only (a file per part runs them side by side); each
 * operation's inputs come from the seed and the operation alone, whichever part drives it.
 */
export async function driveHostileInput(
  h: Harness,
  options: { seed: number; only?: string; part?: (operation: Operation) => boolean },
): Promise<HostileReport> {
  const started = performance.now();
  const answer = await h.app.inject({ method: 'GET', url: '/api/openapi.json' });
  const documented = operationsOf(JSON.parse(answer.body));
  const chosen = [...documented, ...undocumentedOperations()].filter(
    (operation) =>
      (options.only === undefined || `${operation.method} ${operation.path}` === options.only) &&
      (options.part === undefined || options.part(operation)),
  );
  const agentToken = (await issueAgentToken(h.ctx, `hostile-${options.seed}`)).token;
  const snapshot = await snapshotter(h.database, h.blobDir);
  const worlds: Record<'user' | 'admin', World | undefined> = { user: undefined, admin: undefined };
  const kindOf = (operation: Operation) => (operation.access === 'admin' ? 'admin' : 'user');
  const freshWorld = async (operation: Operation) => {
    const kind = kindOf(operation);
    worlds[kind] = await seedWorld(h, { role: kind === 'admin' ? 'ADMIN' : undefined });
    return worlds[kind];
  };
  const failures: string[] = [];
  let tried = 0;
  let accepted = 0;
  let reseeded = 0;
  for (const operation of chosen) {
    const rng = prng(options.seed ^ hash(`${operation.method} ${operation.path}`));
    let world = worlds[kindOf(operation)] ?? (await freshWorld(operation));
    let before: StoreSnapshot = await snapshot();
    for (const input of generate(operation, world.ids, rng)) {
      tried += 1;
      const authorization =
        operation.access === 'agent'
          ? `Bearer ${agentToken}`
          : `Basic ${Buffer.from(`${world.user.key}:`).toString('base64')}`;
      const from = h.queries.length;
      const began = performance.now();
      let response;
      try {
        response = await h.app.inject({
          method: input.method as 'GET',
          url: input.url,
          headers: { ...input.headers, authorization },
          payload: input.payload,
        });
      } catch (error) {
        failures.push(
          `${operation.method} ${operation.path} [${input.label}]: inject threw ${(error as Error).message}`,
        );
        continue;
      }
      const took = performance.now() - began;
      const after = await snapshot();
      const where = `${input.method} ${input.url.slice(0, 140)} [${input.label}; Accept ${input.headers.accept ?? '-'}]`;
      const problem = problemWith(input, response.statusCode, response.headers, response.body);
      if (problem !== undefined) failures.push(`${where}: ${problem}`);
      if (took > 5000) failures.push(`${where}: took ${took.toFixed(0)} ms`);
      const success = response.statusCode < 400;
      if (success) accepted += 1;
      if (!success || input.method === 'GET') {
        let changed = difference(before, after);
        let writes = writesIn(h.queries.slice(from));
        // A wrong password is recorded against its account (services/password-guesses.ts): the one
        // write a refused sign-in makes on purpose.
        if (TAKES_PASSWORD.test(`${operation.method} ${operation.path}`)) {
          changed = changed
            .split('; ')
            .filter((change) => !change.startsWith('password_guesses:'))
            .join('; ');
          writes = writes.filter((write) => !/password_guesses/.test(write));
        }
        // SQLite counts rolled-back changes too: an in-place change counts only if one committed.
        if (changed === 'rows changed in place' && writes.length === 0) changed = '';
        if (changed !== '')
          failures.push(
            `${where}: answered ${response.statusCode} but wrote: ${changed} ${writes.map((w) => w.slice(0, 60)).join(' | ')}`,
          );
      }
      // A write that went through may have used up the world (a deleted file, a reset key, an
      // admin who demoted themselves): the next inputs get a fresh one.
      if (
        (success && DESTRUCTIVE.test(`${input.method} ${operation.path}`)) ||
        before.rows.users !== after.rows.users
      ) {
        world = await freshWorld(operation);
        reseeded += 1;
        before = await snapshot();
      } else before = after;
    }
    h.queries.length = 0;
  }
  return {
    documented,
    operations: chosen.length,
    tried,
    accepted,
    reseeded,
    failures,
    seconds: (performance.now() - started) / 1000,
  };
}

const TAKES_PASSWORD = /^(GET|POST) \/(oauth\/token|auth\/session)$/;

function hash(text: string): number {
  let value = 2166136261;
  for (let i = 0; i < text.length; i++) value = Math.imul(value ^ text.charCodeAt(i), 16777619);
  return value >>> 0;
}
