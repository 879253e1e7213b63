/**
 * The one configuration of every role, resolved from defaults < config file < environment < flags
 * and validated at start. A bad value stops the start with a message naming the setting, where it
 * came from, and what is allowed.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ZipLimits } from './files/zip.ts';
import { isPostgresUrl } from './store/db.ts';
import { type SecretKey, parseSecretKeys } from './services/secret-box.ts';

import { FLAVOURS, type Flavour, SANDBOX_NETWORKS, type SandboxNetwork } from './domain/flavours.ts';
import { parseNetwork } from './domain/hook-destinations.ts';

export { FLAVOURS, type Flavour };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** Where uploads and artifacts live; servers of one cloud share it. Default: dataDir/blobs. */
  readonly blobDir: string | undefined;
  /** postgres://… for PostgreSQL; absent for SQLite under dataDir. */
  readonly databaseUrl: string | undefined;
  readonly publicUrl: string | undefined;
  readonly flavour: Flavour;
  readonly logLevel: LogLevel;
  /** Limit of form and JSON request bodies, bytes. */
  readonly bodyLimit: number;
  /** Largest uploaded file, bytes. */
  readonly maxUploadBytes: number;
  /**
   * What a zip (test package, APK, IPA, data) may hold: entries, bytes once expanded, and the
   * expansion ratio. Checked at upload from the central directory (400 beyond) and again by the
   * agent while unpacking, counting what it writes: servers and agents of a cloud should agree.
   */
  readonly zipMaxEntries: number;
  readonly zipMaxExpandedBytes: number;
  readonly zipMaxRatio: number;
  readonly trustProxy: boolean;
  /** Agents: how often they heartbeat; a lost agent's runs are given up after `leaseMs`. */
  readonly heartbeatMs: number;
  readonly leaseMs: number;
  /** Requests per minute per signed-in user, and per address on anonymous routes; 0: no limit. */
  readonly rateLimitPerUser: number;
  readonly rateLimitPerIp: number;
  /** Failed sign-ins per account in a sliding window of 15 minutes, whatever the address; 0: no limit. */
  readonly passwordGuessesPerAccount: number;
  /** Failed sign-ins per address in the same sliding window; 0: no limit. */
  readonly passwordGuessesPerAddress: number;
  /** How often the retention job runs (domain/retention.ts). */
  readonly retentionIntervalMs: number;
  /** Internal networks run-finished hooks may reach all the same (CIDRs); none by default. */
  readonly hookAllowNetworks: readonly string[];
  /** Agent role: the server to work for, and its token. */
  /** Agents: the servers to work for, tried in turn when one does not answer. */
  readonly serverUrls: readonly string[] | undefined;
  readonly agentToken: string | undefined;
  readonly driver: Driver;
  /** Virtual driver: how many devices (two thirds Android, one third iOS). */
  readonly virtualDevices: number;
  /** Virtual driver: the start of its devices' serials, which must differ between hosts of one cloud. */
  readonly virtualPrefix: string;
  /** iOS driver: the go-ios executable (else the go-ios npm package's, else `ios` on PATH). */
  readonly iosBinary: string | undefined;
  /** iOS driver: the folder with the service's profile.mobileprovision and identity.p12. */
  readonly iosSigningDir: string | undefined;
  /** iOS driver: `go-ios` (its `ios sign app`) or the path of zsign. */
  readonly iosSigner: string;
  /**
   * Agents: how customer code (test packages' run-tests.sh) runs. auto: bubblewrap where it works,
   * else the agent refuses to start on the public flavour and warns on the others; bubblewrap:
   * required everywhere; none: no isolation, for development only (refused on public).
   */
  readonly sandbox: SandboxChoice;
  /** Agents: the sandbox's network; unset: none on the public flavour, host on the others. */
  readonly sandboxNetwork: SandboxNetwork | undefined;
  /** Agents running as root: runs take uids from here up (1000 of them), used by nothing else. */
  readonly sandboxUidBase: number;
  /** Agents: limits of one run's customer code. */
  readonly sandboxMemoryMb: number;
  readonly sandboxProcesses: number;
  readonly sandboxCpuSeconds: number;
  readonly sandboxDiskMb: number;
  /** Agents: more paths customer code may read (an Android SDK outside /usr, say). */
  readonly sandboxReadOnly: readonly string[];
  /** Agents: the input cache's size cap, bytes; the least recently used inputs go first. */
  readonly agentCacheMaxBytes: number;
  /**
   * The keys that encrypt API keys in the database, the current one first (`id:base64`, comma
   * separated). Servers sharing one PostgreSQL must all have the same. When absent, the key file.
   */
  readonly apiKeyEncryptionKeys: readonly SecretKey[] | undefined;
  /** The key file when no keys are set; default <dataDir>/secrets/api-key-encryption.key, created on first start. */
  readonly apiKeyEncryptionKeyFile: string | undefined;
}

export const SANDBOX_CHOICES = ['auto', 'bubblewrap', 'none'] as const;
export type SandboxChoice = (typeof SANDBOX_CHOICES)[number];

export const DRIVERS = ['virtual', 'adb', 'ios'] as const;
export type Driver = (typeof DRIVERS)[number];

export class ConfigError extends Error {}

type Raw = string | number | boolean;

interface Setting<T> {
  readonly flag: string;
  readonly env: readonly string[];
  readonly fallback: T;
  /** The value is a secret: an error about it does not repeat it. */
  readonly secret?: boolean;
  parse(value: Raw): T;
}

const text = (value: Raw) => String(value).trim();

const SCHEMA: { readonly [K in keyof Config]: Setting<Config[K]> } = {
  port: {
    flag: '--port',
    env: ['DEVICECLOUD_PORT', 'PORT'],
    fallback: 8080,
    parse: (value) => {
      const port = Number(text(value));
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('must be a port number between 0 and 65535');
      return port;
    },
  },
  host: {
    flag: '--host',
    env: ['DEVICECLOUD_HOST'],
    fallback: '127.0.0.1',
    parse: (value) => {
      const host = text(value);
      if (host === '' || /[\s/]/.test(host)) throw new Error('must be a host name or IP address, e.g. 0.0.0.0');
      return host;
    },
  },
  blobDir: {
    flag: '--blob-dir',
    env: ['DEVICECLOUD_BLOB_DIR'],
    fallback: undefined,
    parse: (value) => {
      const dir = text(value);
      if (dir === '') throw new Error('must be a directory path');
      return path.resolve(dir);
    },
  },
  dataDir: {
    flag: '--data-dir',
    env: ['DEVICECLOUD_DATA_DIR'],
    fallback: path.resolve('data'),
    parse: (value) => {
      const dir = text(value);
      if (dir === '') throw new Error('must be a directory path');
      return path.resolve(dir);
    },
  },
  databaseUrl: {
    flag: '--database-url',
    env: ['DATABASE_URL', 'DEVICECLOUD_DATABASE_URL'],
    fallback: undefined,
    parse: (value) => {
      const url = text(value);
      if (url === '') return undefined;
      if (!isPostgresUrl(url)) throw new Error('must be a postgres:// or postgresql:// URL (leave it unset for SQLite under the data dir)');
      try {
        new URL(url);
      } catch {
        throw new Error('is not a valid URL');
      }
      return url;
    },
  },
  publicUrl: {
    flag: '--public-url',
    env: ['DEVICECLOUD_PUBLIC_URL'],
    fallback: undefined,
    parse: (value) => {
      const url = text(value).replace(/\/+$/, '');
      if (url === '') return undefined;
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new Error('must be an http(s) URL such as https://devices.example.com/devicecloud');
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('must be an http or https URL');
      return url;
    },
  },
  flavour: {
    flag: '--flavour',
    env: ['DEVICECLOUD_FLAVOUR'],
    fallback: 'private',
    parse: (value) => oneOf(text(value).toLowerCase(), FLAVOURS),
  },
  logLevel: {
    flag: '--log-level',
    env: ['DEVICECLOUD_LOG_LEVEL'],
    fallback: 'info',
    parse: (value) => oneOf(text(value).toLowerCase(), LOG_LEVELS),
  },
  bodyLimit: {
    flag: '--body-limit',
    env: ['DEVICECLOUD_BODY_LIMIT'],
    fallback: 1024 * 1024,
    parse: (value) => {
      const bytes = Number(text(value));
      if (!Number.isInteger(bytes) || bytes < 1024) throw new Error('must be a number of bytes, at least 1024');
      return bytes;
    },
  },
  maxUploadBytes: {
    flag: '--max-upload-bytes',
    env: ['DEVICECLOUD_MAX_UPLOAD_BYTES'],
    fallback: 4 * 1024 ** 3,
    parse: (value) => {
      const bytes = Number(text(value));
      if (!Number.isSafeInteger(bytes) || bytes < 1024) throw new Error('must be a number of bytes, at least 1024');
      return bytes;
    },
  },
  zipMaxEntries: {
    flag: '--zip-max-entries',
    env: ['DEVICECLOUD_ZIP_MAX_ENTRIES'],
    fallback: 20_000,
    parse: (value) => whole(value, 1, 10_000_000, 'entries'),
  },
  zipMaxExpandedBytes: {
    flag: '--zip-max-expanded-bytes',
    env: ['DEVICECLOUD_ZIP_MAX_EXPANDED_BYTES'],
    fallback: 4 * 1024 ** 3,
    parse: (value) => whole(value, 1024 * 1024, Number.MAX_SAFE_INTEGER, 'bytes'),
  },
  zipMaxRatio: {
    flag: '--zip-max-ratio',
    env: ['DEVICECLOUD_ZIP_MAX_RATIO'],
    fallback: 200,
    parse: (value) => whole(value, 2, 100_000, 'times its compressed size'),
  },
  agentCacheMaxBytes: {
    flag: '--cache-max-bytes',
    env: ['DEVICECLOUD_AGENT_CACHE_MAX_BYTES'],
    fallback: 10 * 1024 ** 3,
    parse: (value) => whole(value, 1024 * 1024, Number.MAX_SAFE_INTEGER, 'bytes'),
  },
  heartbeatMs: {
    flag: '--heartbeat-ms',
    env: ['DEVICECLOUD_HEARTBEAT_MS'],
    fallback: 5000,
    parse: (value) => milliseconds(value, 100, 600_000),
  },
  leaseMs: {
    flag: '--lease-ms',
    env: ['DEVICECLOUD_LEASE_MS'],
    fallback: 60_000,
    parse: (value) => milliseconds(value, 500, 3_600_000),
  },
  rateLimitPerUser: {
    flag: '--rate-limit-per-user',
    env: ['DEVICECLOUD_RATE_LIMIT_PER_USER'],
    // A CI job polling every second uses 60; a busy dashboard a few hundred.
    fallback: 3000,
    parse: (value) => perMinute(value),
  },
  rateLimitPerIp: {
    flag: '--rate-limit-per-ip',
    env: ['DEVICECLOUD_RATE_LIMIT_PER_IP'],
    fallback: 300,
    parse: (value) => perMinute(value),
  },
  passwordGuessesPerAccount: {
    flag: '--password-guesses-per-account',
    env: ['DEVICECLOUD_PASSWORD_GUESSES_PER_ACCOUNT'],
    // Enough for a person mistyping; a guesser spread over many addresses gets 40 an hour.
    fallback: 10,
    parse: (value) => guessesPerWindow(value),
  },
  passwordGuessesPerAddress: {
    flag: '--password-guesses-per-address',
    env: ['DEVICECLOUD_PASSWORD_GUESSES_PER_ADDRESS'],
    // Several people behind one address (an office's NAT) mistyping now and then.
    fallback: 50,
    parse: (value) => guessesPerWindow(value),
  },
  retentionIntervalMs: {
    flag: '--retention-interval-ms',
    env: ['DEVICECLOUD_RETENTION_INTERVAL_MS'],
    fallback: 3_600_000,
    parse: (value) => milliseconds(value, 1000, 7 * 24 * 3_600_000),
  },
  hookAllowNetworks: {
    flag: '--hook-allow-networks',
    env: ['DEVICECLOUD_HOOK_ALLOW_NETWORKS'],
    fallback: [],
    parse: (value) =>
      text(value)
        .split(',')
        .filter((part) => part.trim() !== '')
        .map((part) => {
          const network = parseNetwork(part);
          if (network === null) throw new Error(`must be networks separated by commas, such as 10.20.0.0/16,127.0.0.1,fd00::/8 ('${part.trim()}' is not one)`);
          return `${network.address}/${network.prefix}`;
        }),
  },
  serverUrls: {
    flag: '--server',
    env: ['DEVICECLOUD_SERVER_URL'],
    fallback: undefined,
    parse: (value) =>
      text(value)
        .split(',')
        .map((part) => {
          const url = part.trim().replace(/\/+$/, '');
          try {
            const parsed = new URL(url);
            if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return url;
          } catch {
            // reported below
          }
          throw new Error('must be the http(s) URL of a devicecloud server (several separated by commas), e.g. http://server:8080');
        }),
  },
  agentToken: {
    flag: '--token',
    env: ['DEVICECLOUD_AGENT_TOKEN'],
    fallback: undefined,
    parse: (value) => {
      const token = text(value);
      if (!/^dca_[A-Za-z0-9_-]{20,}$/.test(token)) throw new Error('must be an agent token (dca_…) from devicecloud admin create-agent-token');
      return token;
    },
  },
  driver: {
    flag: '--driver',
    env: ['DEVICECLOUD_DRIVER'],
    fallback: 'virtual',
    parse: (value) => oneOf(text(value).toLowerCase(), DRIVERS),
  },
  virtualPrefix: {
    flag: '--serial-prefix',
    env: ['DEVICECLOUD_SERIAL_PREFIX'],
    fallback: 'virtual',
    parse: (value) => {
      const prefix = text(value);
      if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,40}$/.test(prefix)) throw new Error('must be letters, digits, dots, dashes or underscores (at most 41)');
      return prefix;
    },
  },
  iosBinary: {
    flag: '--ios-bin',
    env: ['DEVICECLOUD_IOS_BIN'],
    fallback: undefined,
    parse: (value) => {
      const file = text(value);
      if (file === '') throw new Error('must be the path of the go-ios `ios` executable');
      return path.resolve(file);
    },
  },
  iosSigningDir: {
    flag: '--ios-signing',
    env: ['DEVICECLOUD_IOS_SIGNING_DIR'],
    fallback: undefined,
    parse: (value) => {
      const dir = text(value);
      if (dir === '') throw new Error('must be the folder holding profile.mobileprovision and identity.p12');
      return path.resolve(dir);
    },
  },
  iosSigner: {
    flag: '--ios-signer',
    env: ['DEVICECLOUD_IOS_SIGNER'],
    fallback: 'go-ios',
    parse: (value) => {
      const signer = text(value);
      if (signer === '') throw new Error('must be go-ios or the path of zsign');
      return signer === 'go-ios' ? signer : path.resolve(signer);
    },
  },
  sandbox: {
    flag: '--sandbox',
    env: ['DEVICECLOUD_SANDBOX'],
    fallback: 'auto',
    parse: (value) => oneOf(text(value).toLowerCase(), SANDBOX_CHOICES),
  },
  sandboxNetwork: {
    flag: '--sandbox-network',
    env: ['DEVICECLOUD_SANDBOX_NETWORK'],
    fallback: undefined,
    parse: (value) => oneOf(text(value).toLowerCase(), SANDBOX_NETWORKS),
  },
  sandboxUidBase: {
    flag: '--sandbox-uid-base',
    env: ['DEVICECLOUD_SANDBOX_UID_BASE'],
    fallback: 1_900_000_000,
    parse: (value) => whole(value, 1000, 4_000_000_000, 'a uid'),
  },
  sandboxMemoryMb: {
    flag: '--sandbox-memory-mb',
    env: ['DEVICECLOUD_SANDBOX_MEMORY_MB'],
    fallback: 4096,
    parse: (value) => whole(value, 16, 1_048_576, 'MiB'),
  },
  sandboxProcesses: {
    flag: '--sandbox-processes',
    env: ['DEVICECLOUD_SANDBOX_PROCESSES'],
    fallback: 512,
    parse: (value) => whole(value, 8, 1_000_000, 'processes'),
  },
  sandboxCpuSeconds: {
    flag: '--sandbox-cpu-seconds',
    env: ['DEVICECLOUD_SANDBOX_CPU_SECONDS'],
    fallback: 3600,
    parse: (value) => whole(value, 1, 10_000_000, 'seconds'),
  },
  sandboxDiskMb: {
    flag: '--sandbox-disk-mb',
    env: ['DEVICECLOUD_SANDBOX_DISK_MB'],
    fallback: 4096,
    parse: (value) => whole(value, 1, 100_000_000, 'MiB'),
  },
  sandboxReadOnly: {
    flag: '--sandbox-read-only',
    env: ['DEVICECLOUD_SANDBOX_READ_ONLY'],
    fallback: [],
    parse: (value) =>
      text(value)
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part !== '')
        .map((part) => {
          if (!path.isAbsolute(part)) throw new Error('must be absolute paths separated by commas');
          return path.resolve(part);
        }),
  },
  virtualDevices: {
    flag: '--devices',
    env: ['DEVICECLOUD_DEVICES'],
    fallback: 6,
    parse: (value) => {
      const count = Number(text(value));
      if (!Number.isInteger(count) || count < 0 || count > 500) throw new Error('must be a number of virtual devices from 0 to 500');
      return count;
    },
  },
  apiKeyEncryptionKeys: {
    flag: '--api-key-encryption-keys',
    env: ['DEVICECLOUD_API_KEY_ENCRYPTION_KEYS'],
    fallback: undefined,
    secret: true,
    parse: (value) => (text(value) === '' ? undefined : parseSecretKeys(text(value))),
  },
  apiKeyEncryptionKeyFile: {
    flag: '--api-key-encryption-key-file',
    env: ['DEVICECLOUD_API_KEY_ENCRYPTION_KEY_FILE'],
    fallback: undefined,
    parse: (value) => {
      const file = text(value);
      if (file === '') throw new Error('must be the path of a key file');
      return path.resolve(file);
    },
  },
  trustProxy: {
    flag: '--trust-proxy',
    env: ['DEVICECLOUD_TRUST_PROXY'],
    fallback: false,
    parse: (value) => {
      const lower = text(value).toLowerCase();
      if (['true', '1', 'yes'].includes(lower)) return true;
      if (['false', '0', 'no'].includes(lower)) return false;
      throw new Error('must be true or false');
    },
  },
};

function whole(value: Raw, min: number, max: number, unit: string): number {
  const number = Number(text(value));
  if (!Number.isSafeInteger(number) || number < min || number > max) throw new Error(`must be a whole number of ${unit} from ${min} to ${max}`);
  return number;
}

function guessesPerWindow(value: Raw): number {
  const count = Number(text(value));
  if (!Number.isInteger(count) || count < 0 || count > 1_000_000) throw new Error('must be a number of failed sign-ins per 15 minutes (0: no limit)');
  return count;
}

function perMinute(value: Raw): number {
  const count = Number(text(value));
  if (!Number.isInteger(count) || count < 0 || count > 10_000_000) throw new Error('must be a number of requests per minute (0: no limit)');
  return count;
}

function milliseconds(value: Raw, min: number, max: number): number {
  const ms = Number(text(value));
  if (!Number.isInteger(ms) || ms < min || ms > max) throw new Error(`must be milliseconds between ${min} and ${max}`);
  return ms;
}

function oneOf<T extends string>(value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new Error(`must be one of ${allowed.join(', ')}`);
  return value as T;
}

export interface ConfigSources {
  /** Values from command-line flags, keyed by setting name; undefined = not given. */
  readonly flags?: Partial<Record<keyof Config, Raw | undefined>>;
  readonly env?: NodeJS.ProcessEnv;
  /** A JSON file of settings (keys as in Config); also DEVICECLOUD_CONFIG. */
  readonly file?: string;
  /** Role-specific defaults, e.g. a quieter log for the local cloud. */
  readonly defaults?: Partial<Config>;
}

export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? {};
  const fileName = sources.file ?? env.DEVICECLOUD_CONFIG;
  const file = fileName === undefined ? {} : readConfigFile(fileName);
  const config: Record<string, unknown> = {};
  for (const key of Object.keys(SCHEMA) as (keyof Config)[]) {
    const setting = SCHEMA[key] as Setting<unknown>;
    const envName = setting.env.find((name) => env[name] !== undefined && env[name] !== '');
    const candidates: Array<[Raw | undefined, string]> = [
      [sources.flags?.[key], setting.flag],
      [envName === undefined ? undefined : env[envName], `environment variable ${envName}`],
      [file[key] as Raw | undefined, `config file ${fileName}`],
    ];
    const given = candidates.find(([value]) => value !== undefined);
    if (given === undefined) {
      config[key] = sources.defaults?.[key] ?? setting.fallback;
      continue;
    }
    const [value, origin] = given;
    try {
      config[key] = setting.parse(value!);
    } catch (error) {
      const from = origin === setting.flag ? setting.flag : `${setting.flag} (from ${origin})`;
      const shown = setting.secret === true ? '(value not shown)' : `'${String(value)}'`;
      throw new ConfigError(`Invalid ${from}: ${shown} ${(error as Error).message}`);
    }
  }
  return config as unknown as Config;
}

function readConfigFile(file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`Cannot read config file ${file}: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`Config file ${file} must hold a JSON object of settings`);
  }
  const unknown = Object.keys(parsed).filter((key) => !(key in SCHEMA));
  if (unknown.length > 0) {
    throw new ConfigError(`Config file ${file} has unknown settings: ${unknown.join(', ')}; known: ${Object.keys(SCHEMA).join(', ')}`);
  }
  return parsed as Record<string, unknown>;
}

/** The zip limits of the settings, as the zip reader takes them. */
export function zipLimitsOf(config: Pick<Config, 'zipMaxEntries' | 'zipMaxExpandedBytes' | 'zipMaxRatio'>): ZipLimits {
  return { maxEntries: config.zipMaxEntries, maxTotalBytes: config.zipMaxExpandedBytes, maxRatio: config.zipMaxRatio };
}

/** Where the SQLite file lives when no database URL is set. */
export function sqliteFile(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'devicecloud.db');
}
