/**
 * A PostgreSQL server of the chaos suite's own, so that restarting it under load disturbs nobody
 * else (the machine's shared server on 5432 serves other test runs). Made with the Debian
 * PostgreSQL binaries already installed for the shared one: initdb into a temporary folder, one
 * port, trust auth, fsync off (a restart is what we test, not the disk). As root, the server runs
 * as the `postgres` user, since PostgreSQL refuses to run as root.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PrivatePostgres {
  readonly url: string;
  /** Stops the server (`fast`: connections are cut, as in a restart by an operator) and starts it again. */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * The server, or why there cannot be one here (the caller says so and skips what needs it).
 * `settings` are more `-c name=value` of the server's (the fleet benchmark preloads pg_stat_statements).
 */
export async function startPrivatePostgres(
  settings: readonly string[] = [],
): Promise<PrivatePostgres | { unavailable: string }> {
  const bin = findBinaries();
  if (bin === undefined) return { unavailable: 'no PostgreSQL server binaries under /usr/lib/postgresql' };
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-chaos-pg-'));
  const data = path.join(dir, 'data');
  const port = await freePort();
  const as = (command: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200${settings.map((setting) => ` -c ${setting}`).join('')}`;
  const ctl = (...args: string[]) =>
    as(path.join(bin, 'pg_ctl'), ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', ...args]);
  try {
    if (asRoot) fs.chownSync(dir, ...postgresIds());
    await as(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await ctl('-o', options, 'start');
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    return { unavailable: `could not start a private PostgreSQL (${(error as Error).message.split('\n')[0]})` };
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(mode = 'fast') {
      await ctl('-m', mode, 'stop');
      await ctl('-o', options, 'start');
    },
    async destroy() {
      await ctl('-m', 'immediate', 'stop').catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function findBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs.readdirSync(root).filter((name) => fs.existsSync(path.join(root, name, 'bin', 'initdb')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin');
}

function postgresIds(): [number, number] {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (line === undefined) throw new Error('there is no postgres user to run the server as');
  const [, , uid, gid] = line.split(':');
  return [Number(uid), Number(gid)];
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
