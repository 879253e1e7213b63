/**
 * Servers of one cloud on the harness's PostgreSQL database, each listening on a port with a
 * LISTEN/NOTIFY connection of its own, as `serve` processes behind a load balancer are: for the
 * tests of what crosses from one server to another. `stop` may come twice (a test stops one early).
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.ts';
import { type Notifier, postgresNotifier } from '../../src/store/notifier.ts';
import { POSTGRES_URL } from './engines.ts';
import type { Harness } from './harness.ts';

export interface CloudServer {
  readonly app: FastifyInstance;
  readonly url: URL;
  readonly notifier: Notifier;
  stop(): Promise<void>;
}

export async function postgresServers(h: Harness, count: number): Promise<CloudServer[]> {
  const servers: CloudServer[] = [];
  for (let index = 0; index < count; index++) {
    const notifier = await postgresNotifier({
      url: POSTGRES_URL,
      schema: h.database.schema!,
      db: h.database.db,
      log: () => undefined,
    });
    const app = await buildApp({ ctx: { ...h.ctx, notifier }, version: 'test' });
    const url = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
    let stopped = false;
    servers.push({
      app,
      url,
      notifier,
      async stop() {
        if (stopped) return;
        stopped = true;
        app.server.closeAllConnections();
        await app.close();
        await notifier.close();
      },
    });
  }
  return servers;
}
