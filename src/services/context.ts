/** What every use case receives: storage, a clock (injectable, so tests can move time), and limits. */
import type { Flavour } from '../domain/flavours.ts';
import { DEFAULT_ZIP_LIMITS, type ZipLimits } from '../domain/zip-limits.ts';
import type { Notifier } from '../store/notifier.ts';
import type { PasswordCost } from './credentials.ts';
import type { KeyRing } from './secret-box.ts';
import type { Senders } from './senders.ts';
import type { BlobStore } from '../store/blobs.ts';
import type { Store } from '../store/store.ts';

export type Clock = () => number;

export interface Limits {
  /** Largest upload, bytes (413 beyond). */
  readonly maxUploadBytes: number;
  /** How long an agent's hold on a running device run lasts without a heartbeat. */
  readonly leaseMs: number;
  /** How often agents are asked to heartbeat. */
  readonly heartbeatMs: number;
  /** How long a claim request is held open when there is no work. */
  readonly claimWaitMs: number;
  /** Infrastructure failures in a row after which a device is taken out of service. */
  readonly maxInfraFailures: number;
  /** How long an OAuth access token works, and its refresh token. */
  readonly oauthAccessTtlMs: number;
  readonly oauthRefreshTtlMs: number;
  /** How long a dashboard sign-in lasts. */
  readonly sessionTtlMs: number;
  /** What an uploaded zip may hold and expand to; one beyond them, or that cannot unpack, is refused (400). */
  readonly zip: ZipLimits;
  /** How long after the password was entered a session may reveal or reset the API key. */
  readonly recentSignInMs: number;
  /** Networks hooks may reach although they are internal (domain/hook-destinations.ts); none by default. */
  readonly hookAllowNetworks: readonly string[];
  /** Failed sign-ins per account within `passwordGuessWindowMs` (services/password-guesses.ts); 0: no limit. */
  readonly passwordGuesses: number;
  /** Failed sign-ins per address within the same window; 0: no limit. */
  readonly passwordGuessesPerAddress: number;
  readonly passwordGuessWindowMs: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxUploadBytes: 4 * 1024 ** 3,
  leaseMs: 60_000,
  heartbeatMs: 5_000,
  claimWaitMs: 25_000,
  maxInfraFailures: 3,
  oauthAccessTtlMs: 60 * 60_000,
  oauthRefreshTtlMs: 30 * 24 * 60 * 60_000,
  sessionTtlMs: 12 * 60 * 60_000,
  zip: DEFAULT_ZIP_LIMITS,
  recentSignInMs: 10 * 60_000,
  hookAllowNetworks: [],
  passwordGuesses: 10,
  passwordGuessesPerAddress: 50,
  passwordGuessWindowMs: 15 * 60_000,
};

export interface Context {
  readonly store: Store;
  readonly clock: Clock;
  readonly blobs: BlobStore;
  readonly notifier: Notifier;
  readonly limits: Limits;
  /** What may be done to devices (domain/flavours.ts). */
  readonly flavour: Flavour;
  /** The keys that seal API keys in the store, kept outside it (server/secret-keys.ts). */
  readonly keyRing: KeyRing;
  /** How notifications are sent (services/senders.ts); absent where nothing may be sent. */
  readonly senders?: Senders;
  /**
   * Tests only (test/support/harness.ts): hash passwords at this lower scrypt cost, because the
   * suite creates thousands of accounts and each costs ~100 ms of CPU at the real one. Servers
   * never set it and hash at PASSWORD_COST (test/integration/password-cost.test.ts checks both).
   */
  readonly testOnlyPasswordCost?: PasswordCost;
}
