/**
 * The store: every table module bound to one executor (the database or an open transaction).
 * `transaction` hands the callback a store whose modules all run inside the same transaction.
 */
import type { Kysely } from 'kysely';
import type { Database, Dialect } from './db.ts';
import { agentsStore } from './agents.ts';
import { deviceRunsStore } from './device-runs.ts';
import { devicesStore } from './devices.ts';
import { filesStore } from './files.ts';
import { hooksStore } from './hooks.ts';
import { projectConfigsStore } from './project-configs.ts';
import { projectsStore } from './projects.ts';
import { queueStore } from './queue.ts';
import { resultsStore } from './results.ts';
import type { Tables } from './schema.ts';
import { testRunsStore } from './test-runs.ts';
import { usersStore } from './users.ts';

export interface Store {
  readonly dialect: Dialect;
  readonly users: ReturnType<typeof usersStore>;
  readonly projects: ReturnType<typeof projectsStore>;
  readonly projectConfigs: ReturnType<typeof projectConfigsStore>;
  readonly devices: ReturnType<typeof devicesStore>;
  readonly testRuns: ReturnType<typeof testRunsStore>;
  readonly deviceRuns: ReturnType<typeof deviceRunsStore>;
  readonly files: ReturnType<typeof filesStore>;
  readonly agents: ReturnType<typeof agentsStore>;
  readonly queue: ReturnType<typeof queueStore>;
  readonly results: ReturnType<typeof resultsStore>;
  readonly hooks: ReturnType<typeof hooksStore>;
  transaction<T>(work: (store: Store) => Promise<T>): Promise<T>;
}

export function createStore(database: Database): Store {
  return bind(database.db, database.dialect);
}

function bind(db: Kysely<Tables>, dialect: Dialect): Store {
  return {
    dialect,
    users: usersStore(db),
    projects: projectsStore(db, dialect),
    projectConfigs: projectConfigsStore(db),
    devices: devicesStore(db, dialect),
    testRuns: testRunsStore(db, dialect),
    deviceRuns: deviceRunsStore(db, dialect),
    files: filesStore(db, dialect),
    agents: agentsStore(db),
    queue: queueStore(db, dialect),
    results: resultsStore(db),
    hooks: hooksStore(db),
    transaction: (work) =>
      db.isTransaction ? work(bind(db, dialect)) : db.transaction().execute((trx) => work(bind(trx, dialect))),
  };
}
