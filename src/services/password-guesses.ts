/**
 * Password guesses counted per account, from whatever address, in a sliding window: at most
 * `limits.passwordGuesses` failed sign-ins (OAuth password grant, dashboard sign-in) in any
 * `limits.passwordGuessWindowMs`. The per-address limit (api/plugins/rate-limit.ts) does not stop a
 * guesser who spreads guesses over many addresses; this does.
 *
 * The count lives in the store, so that every server behind a load balancer counts the same
 * guesses (a count in each server's memory would give a guesser one allowance per server), and a
 * restart does not reset it. One row per attempt with its time (a sliding log, so the window
 * slides: there is no edge at which twice the limit gets through). An attempt records itself
 * before the password is checked and counts the rows after: guesses sent at the same moment see
 * each other, so no more than the limit are ever checked in a window. A refused attempt and a
 * successful sign-in remove their row; the account's rows older than the window are removed on
 * each attempt, and everyone's by the retention job.
 *
 * The account is named by the e-mail as given, hashed: unknown e-mails are counted like known ones,
 * so the answers say nothing about which accounts exist. A locked account stays locked for its
 * owner too until the window has slid past the guesses (their API key keeps working).
 */
import { createHash } from 'node:crypto';
import { TooManyRequestsError } from '../domain/errors.ts';
import { normalizeEmail } from '../domain/users.ts';
import type { Context } from './context.ts';

export interface Guess {
  /** The password was right: this attempt does not count against the account. */
  succeeded(): Promise<void>;
}

const NOT_COUNTED: Guess = { succeeded: async () => undefined };

/** Counts an attempt for the account named `rawEmail`; throws 429 when it has had its guesses. */
export async function startGuess(ctx: Context, rawEmail: string): Promise<Guess> {
  const { passwordGuesses: limit, passwordGuessWindowMs: windowMs } = ctx.limits;
  if (limit === 0) return NOT_COUNTED;
  const store = ctx.store.passwordGuesses;
  const key = accountKey(rawEmail);
  const now = ctx.clock();
  const since = now - windowMs + 1;
  await store.pruneAccount(key, since);
  const id = await store.record(key, now);
  const { count, oldest } = await store.since(key, since);
  if (count > limit) {
    await store.forget(id);
    const retryAfterSeconds = Math.max(1, Math.ceil(((oldest ?? now) + windowMs - now) / 1000));
    throw new TooManyRequestsError(
      `Too many failed sign-ins for this account: at most ${limit} in ${Math.round(windowMs / 60_000)} minutes, from any address; try again in ${retryAfterSeconds} s (API keys keep working)`,
      retryAfterSeconds,
    );
  }
  return { succeeded: () => store.forget(id) };
}

/** Removes every account's guesses that left the window (the retention job); answers how many. */
export function pruneGuesses(ctx: Context): Promise<number> {
  return ctx.store.passwordGuesses.pruneAll(ctx.clock() - ctx.limits.passwordGuessWindowMs + 1);
}

function accountKey(rawEmail: string): string {
  let email: string;
  try {
    email = normalizeEmail(rawEmail);
  } catch {
    email = rawEmail.trim().toLowerCase().slice(0, 1000);
  }
  return createHash('sha256').update(email).digest('base64url');
}
