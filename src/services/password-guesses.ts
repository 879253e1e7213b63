/**
 * Password guesses counted per account, from whatever address, in a sliding window: at most
 * `limits.passwordGuesses` failed sign-ins (OAuth password grant, dashboard sign-in) in any
 * `limits.passwordGuessWindowMs`. The per-address limits do not stop a guesser who spreads guesses
 * over many addresses; this does. Per address, failed sign-ins are counted the same way
 * (`limits.passwordGuessesPerAddress`, api/plugins/password-guesses.ts), beside the per-minute
 * request limit (api/plugins/rate-limit.ts), whose fixed window lets twice its number through
 * across a minute's edge.
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
  /** The attempt was not a failed guess (the password was right): it does not count. */
  forget(): Promise<void>;
}

const NOT_COUNTED: Guess = { forget: async () => undefined };

/** Counts an attempt for the account named `rawEmail`; throws 429 when it has had its guesses. */
export function startGuess(ctx: Context, rawEmail: string): Promise<Guess> {
  return countAttempt(
    ctx,
    accountKey(rawEmail),
    ctx.limits.passwordGuesses,
    'for this account: at most',
    ', from any address',
  );
}

/** Counts an attempt from an address (api/plugins/password-guesses.ts), in the same sliding window. */
export function startAddressGuess(ctx: Context, address: string): Promise<Guess> {
  return countAttempt(
    ctx,
    `address ${address}`,
    ctx.limits.passwordGuessesPerAddress,
    'from this address: at most',
    '',
  );
}

async function countAttempt(ctx: Context, key: string, limit: number, whose: string, whence: string): Promise<Guess> {
  const windowMs = ctx.limits.passwordGuessWindowMs;
  if (limit === 0) return NOT_COUNTED;
  const store = ctx.store.passwordGuesses;
  const now = ctx.clock();
  const since = now - windowMs + 1;
  await store.pruneAccount(key, since);
  const id = await store.record(key, now);
  const { count, oldest } = await store.since(key, since);
  if (count > limit) {
    await store.forget(id);
    const retryAfterSeconds = Math.max(1, Math.ceil(((oldest ?? now) + windowMs - now) / 1000));
    throw new TooManyRequestsError(
      `Too many failed sign-ins ${whose} ${limit} in ${Math.round(windowMs / 60_000)} minutes${whence}; try again in ${retryAfterSeconds} s (API keys keep working)`,
      retryAfterSeconds,
    );
  }
  return { forget: () => store.forget(id) };
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
  return `account ${createHash('sha256').update(email).digest('base64url')}`;
}
