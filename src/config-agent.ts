/**
 * The settings of the agent role (device hosts): its servers and token, the driver and its
 * devices, the sandbox of customer code and the input cache. Part of the one configuration
 * (config.ts), which reads and checks them with the rest.
 */
import path from 'node:path';
import { SANDBOX_NETWORKS, type SandboxNetwork } from './domain/flavours.ts';
import { type Setting, oneOf, text, whole } from './config-values.ts';

export const SANDBOX_CHOICES = ['auto', 'bubblewrap', 'none'] as const;
export type SandboxChoice = (typeof SANDBOX_CHOICES)[number];

export const DRIVERS = ['virtual', 'adb', 'ios'] as const;
export type Driver = (typeof DRIVERS)[number];

export interface AgentConfig {
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
}

export const AGENT_SETTINGS: { readonly [K in keyof AgentConfig]: Setting<AgentConfig[K]> } = {
  agentCacheMaxBytes: {
    flag: '--cache-max-bytes',
    env: ['DEVICECLOUD_AGENT_CACHE_MAX_BYTES'],
    fallback: 10 * 1024 ** 3,
    parse: (value) => whole(value, 1024 * 1024, Number.MAX_SAFE_INTEGER, 'bytes'),
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
          throw new Error(
            'must be the http(s) URL of a devicecloud server (several separated by commas), e.g. http://server:8080',
          );
        }),
  },
  agentToken: {
    flag: '--token',
    env: ['DEVICECLOUD_AGENT_TOKEN'],
    fallback: undefined,
    parse: (value) => {
      const token = text(value);
      if (!/^dca_[A-Za-z0-9_-]{20,}$/.test(token))
        throw new Error('must be an agent token (dca_…) from devicecloud admin create-agent-token');
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
      if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,40}$/.test(prefix))
        throw new Error('must be letters, digits, dots, dashes or underscores (at most 41)');
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
      if (!Number.isInteger(count) || count < 0 || count > 500)
        throw new Error('must be a number of virtual devices from 0 to 500');
      return count;
    },
  },
};
