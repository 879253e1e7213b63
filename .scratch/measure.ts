import { sql } from 'kysely';
import { openDatabase } from '../src/store/db.ts';
import { migrate } from '../src/store/migrations/index.ts';

const N = Number(process.argv[2] ?? 100000);
for (const engine of ['sqlite', 'postgres'] as const) {
  const database = await openDatabase({ databaseUrl: engine === 'postgres' ? 'postgres://postgres@127.0.0.1:5432/test' : undefined, sqliteFile: '/tmp/measure-quota.db', pgSchema: engine === 'postgres' ? 'measure_quota_' + process.pid : undefined });
  await migrate(database);
  const db = database.db as any;
  const u = await db.insertInto('users').values({ email: `a${Date.now()}@x`, password_hash: 'x', first_name: 'a', last_name: 'b', status: 'ENABLED', role: 'USER', plan: 'GOLD', api_key: 'k'+Date.now(), api_key_hash: 'h'+Date.now(), create_time: 0 }).returning('id').executeTakeFirstOrThrow();
  const u2 = await db.insertInto('users').values({ email: `b${Date.now()}@x`, password_hash: 'x', first_name: 'a', last_name: 'b', status: 'ENABLED', role: 'USER', plan: 'GOLD', api_key: 'k2'+Date.now(), api_key_hash: 'h2'+Date.now(), create_time: 0 }).returning('id').executeTakeFirstOrThrow();
  const row = (i: number, user: number) => ({ user_id: user, name: `f${i}`, size: 1000 + i, mimetype: 'x', sha256: 's' + i, blob_key: 'b' + i, state: 'READY', direction: 'OUTPUT', properties_json: '{}', tags: '', create_time: i });
  for (let i = 0; i < N; i += 1000) {
    await db.insertInto('files').values(Array.from({ length: 1000 }, (_, j) => row(i + j, j % 10 === 0 ? u2.id : u.id))).execute();
  }
  const time = async (label: string, f: () => Promise<unknown>, reps = 20) => {
    await f();
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) await f();
    console.log(engine, label, ((performance.now() - t0) / reps).toFixed(2), 'ms');
  };
  const sum = () => db.selectFrom('files').select(sql`COALESCE(SUM(size),0)`.as('s')).where('user_id', '=', u.id).executeTakeFirst();
  await time(`SUM over ${N * 0.9} files, index (user_id, create_time)`, sum);
  await db.schema.createIndex('files_user_size').on('files').columns(['user_id', 'size']).execute();
  if (engine === 'postgres') await sql`VACUUM ANALYZE files`.execute(db); else await sql`ANALYZE`.execute(db);
  await time(`SUM over ${N * 0.9} files, covering index (user_id, size)`, sum);
  await time('point read users row', () => db.selectFrom('users').selectAll().where('id', '=', u.id).executeTakeFirst());
  await database.close();
  if (engine === 'postgres') { const d = await openDatabase({ databaseUrl: 'postgres://postgres@127.0.0.1:5432/test' }); await sql`DROP SCHEMA ${sql.raw('measure_quota_' + process.pid)} CASCADE`.execute(d.db); await d.close(); }
}
