/**
 * The one configuration of every role, resolved from defaults < config file < environment < flags
 * and validated at start. A bad value stops the start with a message naming the setting, where it
 * came from, and what is allowed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_LIVE_LOG_RETENTION_MS } from './domain/retention.ts';
import { isPostgresUrl } from './domain/database-url.ts';
import { type SecretKey, parseSecretKeys } from './domain/secret-keys.ts';
import type { ZipLimits } from './domain/zip-limits.ts';
import { FLAVOURS, type Flavour } from './domain/flavours.ts';
import { parseNetwork } from './domain/hook-destinations.ts';
import { parseSmtpUrl } from './domain/smtp-url.ts';
import { AGENT_SETTINGS, type AgentConfig } from './config-agent.ts';
import { BLOB_SETTINGS, type BlobConfig } from './config-blobs.ts';
import {
  ConfigError,
  type Raw,
  type Setting,
  guessesPerWindow,
  milliseconds,
  oneOf,
  perMinute,
  text,
  whole,
  yesOrNo,
} from './config-values.ts';

export { ConfigError, FLAVOURS, type Flavour };
export { DRIVERS, type Driver, SANDBOX_CHOICES, type SandboxChoice } from './config-agent.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The settings of every role: the store and the server here, the agent role in config-agent.ts. */
export interface Config extends AgentConfig, BlobConfig {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
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
  /** How long an interactive session's device log is kept after it ended (domain/retention.ts). */
  readonly liveLogRetentionMs: number;
  /** Internal networks run-finished hooks may reach all the same (CIDRs); none by default. */
  readonly hookAllowNetworks: readonly string[];
  /** The SMTP server notification e-mails go through (docs/api.md#notifications); none: no e-mail. */
  readonly smtpUrl: string | undefined;
  /** The sender address of notification e-mails. */
  readonly mailFrom: string;
  /**
   * The keys that encrypt API keys in the database, the current one first (`id:base64`, comma
   * separated). Servers sharing one PostgreSQL must all have the same. When absent, the key file.
   */
  readonly apiKeyEncryptionKeys: readonly SecretKey[] | undefined;
  /** The key file when no keys are set; default <dataDir>/secrets/api-key-encryption.key, created on first start. */
  readonly apiKeyEncryptionKeyFile: string | undefined;
}

const SCHEMA: { readonly [K in keyof Config]: Setting<Config[K]> } = {
  port: {
    flag: '--port',
    env: ['DEVICECLOUD_PORT', 'PORT'],
    fallback: 8080,
    parse: (value) => {
      const port = Number(text(value));
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new Error('must be a port number between 0 and 65535');
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
      if (!isPostgresUrl(url))
        throw new Error('must be a postgres:// or postgresql:// URL (leave it unset for SQLite under the data dir)');
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
  liveLogRetentionMs: {
    flag: '--live-log-retention-ms',
    env: ['DEVICECLOUD_LIVE_LOG_RETENTION_MS'],
    fallback: DEFAULT_LIVE_LOG_RETENTION_MS,
    parse: (value) => milliseconds(value, 0, 3650 * 24 * 3_600_000),
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
          if (network === null)
            throw new Error(
              `must be networks separated by commas, such as 10.20.0.0/16,127.0.0.1,fd00::/8 ('${part.trim()}' is not one)`,
            );
          return `${network.address}/${network.prefix}`;
        }),
  },
  smtpUrl: {
    flag: '--smtp-url',
    env: ['DEVICECLOUD_SMTP_URL'],
    fallback: undefined,
    // It may carry the SMTP password.
    secret: true,
    parse: (value) => {
      const url = text(value);
      if (url === '') return undefined;
      parseSmtpUrl(url);
      return url;
    },
  },
  mailFrom: {
    flag: '--mail-from',
    env: ['DEVICECLOUD_MAIL_FROM'],
    fallback: 'devicecloud@localhost',
    parse: (value) => {
      const address = text(value);
      if (!/^[^\s<>@]+@[^\s<>@]+$/.test(address))
        throw new Error('must be an e-mail address, e.g. devicecloud@example.com');
      return address;
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
    parse: (value) => yesOrNo(value),
  },
  ...AGENT_SETTINGS,
  ...BLOB_SETTINGS,
};

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
  if (config.blobDir !== undefined && config.blobUrl !== undefined)
    throw new ConfigError('Give --blob-dir or --blob-url, not both: blobs live in one place');
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
    throw new ConfigError(
      `Config file ${file} has unknown settings: ${unknown.join(', ')}; known: ${Object.keys(SCHEMA).join(', ')}`,
    );
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
