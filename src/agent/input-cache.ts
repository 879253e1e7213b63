/**
 * The agent's cache of run inputs (apps, test packages, data), by checksum: the same app on many
 * devices of a host is fetched once. Nothing in it is trusted as is: every use copies the cached
 * file into the run's own folder while hashing the bytes copied, so the run gets exactly the bytes
 * whose checksum the server gave, whatever was done to the cache (a poisoned entry is dropped and
 * fetched again). The folder is the agent's alone (0700), outside every run folder.
 *
 * Bounded: a size cap, the least recently used inputs leaving first (inputs in use never), and no
 * input kept longer after its last use than the cloud's flavour allows (domain/retention.ts).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface InputCacheOptions {
  readonly dir: string;
  readonly maxBytes: number;
  /** How long an input may stay after its last use; the server says (hello), per flavour. */
  readonly retentionMs: () => number;
  readonly log: (message: string) => void;
  readonly now?: () => number;
}

export interface WantedInput {
  readonly sha256: string;
  readonly name: string;
}

/** Fetches the input to `target` (which the cache then checks). */
export type Fetch = (target: string) => Promise<void>;

export interface InputCache {
  /** Puts a verified copy of the input at `target`, fetching it when it is not cached (or not intact). */
  provide(input: WantedInput, target: string, fetch: Fetch): Promise<void>;
  /** Removes inputs past their retention, then the least recently used until under the cap. */
  sweep(): Promise<void>;
}

const SHA256 = /^[0-9a-f]{64}$/;

export function inputCache(options: InputCacheOptions): InputCache {
  const now = options.now ?? Date.now;
  const pinned = new Map<string, number>();
  const fetching = new Map<string, Promise<void>>();
  let counter = 0;
  fs.mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(options.dir, 0o700);
  // Leftovers of an agent that died while fetching.
  for (const name of fs.readdirSync(options.dir))
    if (name.endsWith('.part')) fs.rmSync(path.join(options.dir, name), { force: true });

  const entry = (sha256: string) => path.join(options.dir, sha256);

  /** Fetches into the cache once, however many runs want the input at the same time. */
  function fetchOnce(input: WantedInput, fetch: Fetch): Promise<void> {
    let pending = fetching.get(input.sha256);
    if (pending === undefined) {
      pending = (async () => {
        const partial = `${entry(input.sha256)}.${process.pid}.${++counter}.part`;
        try {
          await fetch(partial);
          const actual = await sha256Of(partial);
          if (actual !== input.sha256)
            throw new Error(
              `download of ${input.name} was corrupted (checksum ${actual.slice(0, 12)}, expected ${input.sha256.slice(0, 12)})`,
            );
          await fs.promises.chmod(partial, 0o600);
          await fs.promises.rename(partial, entry(input.sha256));
        } finally {
          await fs.promises.rm(partial, { force: true });
          fetching.delete(input.sha256);
        }
      })();
      fetching.set(input.sha256, pending);
    }
    return pending;
  }

  async function provide(input: WantedInput, target: string, fetch: Fetch): Promise<void> {
    if (!SHA256.test(input.sha256))
      throw new Error(`${input.name}: not a SHA-256 checksum: ${input.sha256.slice(0, 80)}`);
    pinned.set(input.sha256, (pinned.get(input.sha256) ?? 0) + 1);
    let fetched = false;
    try {
      for (let attempt = 1; ; attempt++) {
        const found = await fs.promises.lstat(entry(input.sha256)).catch(() => null);
        // Only a plain file is read: a link or a FIFO put there would be followed, or block.
        if (found !== null && !found.isFile())
          await fs.promises.rm(entry(input.sha256), { force: true, recursive: true });
        if (found === null || !found.isFile()) {
          await fetchOnce(input, fetch);
          fetched = true;
        }
        const actual = await copyHashing(entry(input.sha256), target).catch((error: NodeJS.ErrnoException) => {
          // Evicted or removed between the check and the copy: fetched again below. Made a link
          // meanwhile (or otherwise unreadable): dropped, and fetched again.
          return error.code === 'ENOENT' ? null : `unreadable (${error.code ?? error.message})`;
        });
        if (actual === input.sha256) {
          const time = new Date(now());
          await fs.promises.utimes(entry(input.sha256), time, time).catch(() => undefined);
          break;
        }
        await fs.promises.rm(target, { force: true });
        if (actual !== null) {
          options.log(
            `cached input ${input.name} (${input.sha256.slice(0, 12)}) no longer matches its checksum (it has ${actual.slice(0, 24)}): removed, fetching it again`,
          );
          await fs.promises.rm(entry(input.sha256), { force: true });
        }
        if (attempt >= 3) throw new Error(`${input.name} could not be put in place intact`);
      }
    } finally {
      const left = (pinned.get(input.sha256) ?? 1) - 1;
      if (left === 0) pinned.delete(input.sha256);
      else pinned.set(input.sha256, left);
    }
    // Only a fetch can take the cache over its cap; retention is swept at each run's end.
    if (fetched) await sweep();
  }

  async function sweep(): Promise<void> {
    const entries: Array<{ sha256: string; size: number; lastUse: number }> = [];
    for (const name of await fs.promises.readdir(options.dir)) {
      if (!SHA256.test(name)) continue;
      const stat = await fs.promises.stat(entry(name)).catch(() => null);
      if (stat !== null) entries.push({ sha256: name, size: stat.size, lastUse: stat.mtimeMs });
    }
    entries.sort((a, b) => a.lastUse - b.lastUse);
    let total = entries.reduce((sum, candidate) => sum + candidate.size, 0);
    const oldest = now() - options.retentionMs();
    for (const candidate of entries) {
      if (pinned.has(candidate.sha256) || fetching.has(candidate.sha256)) continue;
      if (candidate.lastUse >= oldest && total <= options.maxBytes) continue;
      await fs.promises.rm(entry(candidate.sha256), { force: true });
      total -= candidate.size;
    }
  }

  return { provide, sweep };
}

/** Copies `source` to `target`, answering the SHA-256 of the bytes written. */
async function copyHashing(source: string, target: string): Promise<string> {
  const hash = createHash('sha256');
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const file = await fs.promises.open(source, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  await pipeline(file.createReadStream(), tee, fs.createWriteStream(target));
  return hash.digest('hex');
}

async function sha256Of(filePath: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(filePath)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
