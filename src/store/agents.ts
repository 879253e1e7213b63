/** Agents: one per device host, authenticated by a token whose hash is all we keep. */
import type { Kysely } from 'kysely';
import type { Agent } from '../domain/agents.ts';
import type { Tables } from './schema.ts';

export type AgentsStore = ReturnType<typeof agentsStore>;

export function agentsStore(db: Kysely<Tables>) {
  const columns = ['id', 'name', 'hostname', 'version', 'create_time', 'last_seen_time'] as const;
  const toAgent = (row: {
    id: number;
    name: string;
    hostname: string | null;
    version: string | null;
    create_time: number;
    last_seen_time: number | null;
  }): Agent => ({
    id: row.id,
    name: row.name,
    hostname: row.hostname,
    version: row.version,
    createTime: row.create_time,
    lastSeenTime: row.last_seen_time,
  });
  return {
    /** Creates the agent, or gives an existing one of that name a new token (the old one stops working). */
    async upsertToken(name: string, tokenHash: string, now: number): Promise<Agent> {
      const existing = await db.selectFrom('agents').select('id').where('name', '=', name).executeTakeFirst();
      if (existing) {
        await db.updateTable('agents').set({ token_hash: tokenHash }).where('id', '=', existing.id).execute();
      } else {
        await db.insertInto('agents').values({ name, token_hash: tokenHash, create_time: now }).execute();
      }
      const row = await db.selectFrom('agents').select(columns).where('name', '=', name).executeTakeFirstOrThrow();
      return toAgent(row);
    },

    async findByTokenHash(tokenHash: string): Promise<Agent | undefined> {
      const row = await db.selectFrom('agents').select(columns).where('token_hash', '=', tokenHash).executeTakeFirst();
      return row && toAgent(row);
    },

    async seen(id: number, now: number, details?: { hostname: string; version: string }): Promise<void> {
      await db
        .updateTable('agents')
        .set({ last_seen_time: now, ...(details && { hostname: details.hostname, version: details.version }) })
        .where('id', '=', id)
        .execute();
    },

    /** Counts every agent as heard from at `now` (a server starting after an outage). */
    async seenAll(now: number): Promise<void> {
      await db.updateTable('agents').set({ last_seen_time: now }).where('last_seen_time', '<', now).execute();
    },

    /** Agents not heard from since `before` that still hold online devices. */
    async silentSince(before: number): Promise<Agent[]> {
      const rows = await db
        .selectFrom('agents')
        .select(columns)
        .where('last_seen_time', '<', before)
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('devices')
              .select('devices.id')
              .whereRef('devices.agent_id', '=', 'agents.id')
              .where('devices.online', '=', 1),
          ),
        )
        .execute();
      return rows.map(toAgent);
    },

    async list(): Promise<Agent[]> {
      return (await db.selectFrom('agents').select(columns).orderBy('id').execute()).map(toAgent);
    },
  };
}
