/**
 * The store: every table module bound to one executor (the database or an open transaction).
 * `transaction` hands the callback a store whose modules all run inside the same transaction.
 */
import type { Kysely } from 'kysely';
import type { Database, Dialect } from './db.ts';
import type { UnavailableError } from '../domain/errors.ts';
import { accountFiguresStore } from './account-figures.ts';
import { agentsStore } from './agents.ts';
import { deviceRunsStore } from './device-runs.ts';
import { devicesStore } from './devices.ts';
import { flakyTestsStore } from './flaky-tests.ts';
import { filesStore } from './files.ts';
import { hooksStore } from './hooks.ts';
import { labelsStore } from './labels.ts';
import { liveFramesStore } from './live-frames.ts';
import { notificationsStore } from './notifications.ts';
import { oauthTokensStore } from './oauth-tokens.ts';
import { preferencesStore } from './preferences.ts';
import { propertiesStore } from './properties.ts';
import { passwordGuessesStore } from './password-guesses.ts';
import { storageStore } from './storage.ts';
import { webSessionsStore } from './web-sessions.ts';
import { webDriverStore } from './webdriver.ts';
import { projectConfigsStore } from './project-configs.ts';
import { projectsStore } from './projects.ts';
import { queueStore } from './queue.ts';
import { recordingsStore } from './recordings.ts';
import { resultsStore } from './results.ts';
import { retentionStore } from './retention.ts';
import { sharingStore } from './sharing.ts';
import type { Tables } from './schema.ts';
import { testRunsStore } from './test-runs.ts';
import { asUnavailable } from './unavailable.ts';
import { usersStore } from './users.ts';

export interface Store {
  readonly dialect: Dialect;
  readonly users: ReturnType<typeof usersStore>;
  readonly projects: ReturnType<typeof projectsStore>;
  readonly projectConfigs: ReturnType<typeof projectConfigsStore>;
  readonly devices: ReturnType<typeof devicesStore>;
  readonly labels: ReturnType<typeof labelsStore>;
  readonly testRuns: ReturnType<typeof testRunsStore>;
  readonly deviceRuns: ReturnType<typeof deviceRunsStore>;
  readonly files: ReturnType<typeof filesStore>;
  readonly agents: ReturnType<typeof agentsStore>;
  readonly queue: ReturnType<typeof queueStore>;
  readonly recordings: ReturnType<typeof recordingsStore>;
  readonly results: ReturnType<typeof resultsStore>;
  readonly flakyTests: ReturnType<typeof flakyTestsStore>;
  readonly retention: ReturnType<typeof retentionStore>;
  readonly hooks: ReturnType<typeof hooksStore>;
  readonly oauthTokens: ReturnType<typeof oauthTokensStore>;
  readonly webSessions: ReturnType<typeof webSessionsStore>;
  readonly storage: ReturnType<typeof storageStore>;
  readonly passwordGuesses: ReturnType<typeof passwordGuessesStore>;
  readonly sharing: ReturnType<typeof sharingStore>;
  readonly notifications: ReturnType<typeof notificationsStore>;
  readonly preferences: ReturnType<typeof preferencesStore>;
  readonly properties: ReturnType<typeof propertiesStore>;
  readonly accountFigures: ReturnType<typeof accountFiguresStore>;
  readonly webDriver: ReturnType<typeof webDriverStore>;
  readonly liveFrames: ReturnType<typeof liveFramesStore>;
  transaction<T>(work: (store: Store) => Promise<T>): Promise<T>;
  /** The error as an UnavailableError when it means the database is gone for a moment (503, retry); else undefined. */
  asUnavailable(error: unknown): UnavailableError | undefined;
}

export function createStore(database: Database): Store {
  return bind(database.db, database.dialect);
}

/**
 * Table modules are made on first use: a transaction builds only the few it touches (building
 * all of them for every transaction showed in the scheduling benchmark's profile).
 */
function bind(db: Kysely<Tables>, dialect: Dialect): Store {
  const made = new Map<string, unknown>();
  const module = <T>(name: string, make: () => T): T => {
    if (!made.has(name)) made.set(name, make());
    return made.get(name) as T;
  };
  const store: Store = {
    dialect,
    get users() {
      return module('users', () => usersStore(db));
    },
    get projects() {
      return module('projects', () => projectsStore(db, dialect));
    },
    get projectConfigs() {
      return module('projectConfigs', () => projectConfigsStore(db));
    },
    get devices() {
      return module('devices', () => devicesStore(db, dialect));
    },
    get labels() {
      return module('labels', () => labelsStore(db, dialect));
    },
    get testRuns() {
      return module('testRuns', () => testRunsStore(db, dialect));
    },
    get deviceRuns() {
      return module('deviceRuns', () => deviceRunsStore(db, dialect));
    },
    get files() {
      return module('files', () => filesStore(db, dialect));
    },
    get agents() {
      return module('agents', () => agentsStore(db));
    },
    get queue() {
      return module('queue', () => queueStore(db, dialect));
    },
    get retention() {
      return module('retention', () => retentionStore(db, dialect));
    },
    get recordings() {
      return module('recordings', () => recordingsStore(db, dialect));
    },
    get results() {
      return module('results', () => resultsStore(db, dialect));
    },
    get flakyTests() {
      return module('flakyTests', () => flakyTestsStore(db, dialect));
    },
    get hooks() {
      return module('hooks', () => hooksStore(db));
    },
    get oauthTokens() {
      return module('oauthTokens', () => oauthTokensStore(db));
    },
    get webSessions() {
      return module('webSessions', () => webSessionsStore(db));
    },
    get storage() {
      return module('storage', () => storageStore(db));
    },
    get passwordGuesses() {
      return module('passwordGuesses', () => passwordGuessesStore(db));
    },
    get sharing() {
      return module('sharing', () => sharingStore(db, dialect));
    },
    get notifications() {
      return module('notifications', () => notificationsStore(db, dialect));
    },
    get preferences() {
      return module('preferences', () => preferencesStore(db));
    },
    get properties() {
      return module('properties', () => propertiesStore(db, dialect));
    },
    get accountFigures() {
      return module('accountFigures', () => accountFiguresStore(db, dialect));
    },
    get webDriver() {
      return module('webDriver', () => webDriverStore(db));
    },
    get liveFrames() {
      return module('liveFrames', () => liveFramesStore(db));
    },
    asUnavailable,
    transaction: (work) =>
      db.isTransaction ? work(store) : db.transaction().execute((trx) => work(bind(trx, dialect))),
  };
  return store;
}
