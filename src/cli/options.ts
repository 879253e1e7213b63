/** Command-line options shared by the roles, and their mapping onto the config schema. */
import type { Command } from 'commander';
import type { Config, ConfigSources } from '../config.ts';

export function addStoreOptions(command: Command): Command {
  return command
    .option('--data-dir <dir>', 'where SQLite and files live (env DEVICECLOUD_DATA_DIR; default ./data)')
    .option('--database-url <url>', 'postgres://… to use PostgreSQL instead of SQLite (env DATABASE_URL)')
    .option('--config <file>', 'JSON file of settings (env DEVICECLOUD_CONFIG)')
    .option(
      '--api-key-encryption-key-file <file>',
      'file of the keys that encrypt API keys in the database (env DEVICECLOUD_API_KEY_ENCRYPTION_KEY_FILE; default <data-dir>/secrets/api-key-encryption.key; or give the keys themselves in env DEVICECLOUD_API_KEY_ENCRYPTION_KEYS)',
    )
    .option(
      '--blob-dir <dir>',
      'where uploads and artifacts live, shared by all servers (env DEVICECLOUD_BLOB_DIR; default <data-dir>/blobs)',
    )
    .option(
      '--blob-url <url>',
      's3://bucket/prefix to keep them in an S3-compatible object store instead (env DEVICECLOUD_BLOB_URL; credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the AWS SDK chain)',
    )
    .option(
      '--s3-endpoint <url>',
      'the object store when not AWS, e.g. http://minio:9000 (env DEVICECLOUD_S3_ENDPOINT)',
    )
    .option(
      '--s3-region <region>',
      'the object store region (env DEVICECLOUD_S3_REGION or AWS_REGION; default us-east-1)',
    )
    .option(
      '--s3-force-path-style <bool>',
      'bucket in the path, as MinIO and most stores other than AWS need (env DEVICECLOUD_S3_FORCE_PATH_STYLE)',
    );
}

export function addServerOptions(command: Command): Command {
  return addZipOptions(addStoreOptions(command))
    .option('--port <port>', 'port to listen on (env DEVICECLOUD_PORT; default 8080)')
    .option('--host <host>', 'address to listen on (env DEVICECLOUD_HOST; default 127.0.0.1)')
    .option('--public-url <url>', 'public base URL for links, may include a context path (env DEVICECLOUD_PUBLIC_URL)')
    .option('--flavour <flavour>', 'public, private or enterprise (env DEVICECLOUD_FLAVOUR; default private)')
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (env DEVICECLOUD_LOG_LEVEL)')
    .option('--body-limit <bytes>', 'largest form or JSON body (env DEVICECLOUD_BODY_LIMIT)')
    .option('--max-upload-bytes <bytes>', 'largest uploaded file (env DEVICECLOUD_MAX_UPLOAD_BYTES; default 4 GiB)')
    .option('--trust-proxy <bool>', 'trust X-Forwarded-* headers from a load balancer (env DEVICECLOUD_TRUST_PROXY)')
    .option('--heartbeat-ms <ms>', 'how often agents heartbeat (env DEVICECLOUD_HEARTBEAT_MS; default 5000)')
    .option(
      '--lease-ms <ms>',
      'a silent agent loses its running device runs after this (env DEVICECLOUD_LEASE_MS; default 60000)',
    )
    .option(
      '--rate-limit-per-user <n>',
      'requests per minute per user, 0 for none (env DEVICECLOUD_RATE_LIMIT_PER_USER; default 3000)',
    )
    .option(
      '--rate-limit-per-ip <n>',
      'requests per minute per address on anonymous routes, 0 for none (env DEVICECLOUD_RATE_LIMIT_PER_IP; default 300)',
    )
    .option(
      '--password-guesses-per-account <n>',
      'failed sign-ins per account in 15 minutes, from any address, 0 for none (env DEVICECLOUD_PASSWORD_GUESSES_PER_ACCOUNT; default 10)',
    )
    .option(
      '--password-guesses-per-address <n>',
      'failed sign-ins per address in 15 minutes, 0 for none (env DEVICECLOUD_PASSWORD_GUESSES_PER_ADDRESS; default 50)',
    )
    .option(
      '--retention-interval-ms <ms>',
      'how often old runs and unused projects are cleared (env DEVICECLOUD_RETENTION_INTERVAL_MS; default 3600000)',
    )
    .option(
      '--live-log-retention-ms <ms>',
      "how long an interactive session's device log is kept after it ended (env DEVICECLOUD_LIVE_LOG_RETENTION_MS; default 2592000000, 30 days)",
    )
    .option(
      '--hook-allow-networks <cidrs>',
      'internal networks run-finished hooks may reach, e.g. 10.20.0.0/16,127.0.0.1 (env DEVICECLOUD_HOOK_ALLOW_NETWORKS; default none)',
    );
}

/** The device options of every role that runs an agent (`agent`, and `local`'s embedded one). */
export function addDriverOptions(command: Command): Command {
  return command
    .option('--driver <driver>', 'virtual, adb or ios (env DEVICECLOUD_DRIVER; default virtual)')
    .option(
      '--devices <n>',
      'virtual driver: number of devices, two thirds Android (env DEVICECLOUD_DEVICES; default 6)',
    )
    .option(
      '--serial-prefix <prefix>',
      'virtual driver: start of the device serials, different on each host of a cloud (env DEVICECLOUD_SERIAL_PREFIX; default virtual)',
    )
    .option(
      '--ios-bin <file>',
      'ios driver: the go-ios executable (env DEVICECLOUD_IOS_BIN; default: the go-ios npm package, else ios on PATH)',
    )
    .option(
      '--ios-signing <dir>',
      "ios driver: folder with the service's profile.mobileprovision and identity.p12 (env DEVICECLOUD_IOS_SIGNING_DIR)",
    )
    .option(
      '--ios-signer <signer>',
      'ios driver: go-ios, or the path of zsign (env DEVICECLOUD_IOS_SIGNER; default go-ios)',
    )
    .option(
      '--sandbox <kind>',
      "how test packages' code runs: auto, bubblewrap or none (env DEVICECLOUD_SANDBOX; default auto: bubblewrap, required on the public flavour)",
    )
    .option(
      '--sandbox-network <network>',
      'none (only its own loopback) or host (env DEVICECLOUD_SANDBOX_NETWORK; default none on public, host otherwise)',
    )
    .option(
      '--sandbox-uid-base <uid>',
      'agents run as root: the first of 1000 uids runs take (env DEVICECLOUD_SANDBOX_UID_BASE; default 1900000000)',
    )
    .option('--sandbox-memory-mb <mib>', "memory of one run's code (env DEVICECLOUD_SANDBOX_MEMORY_MB; default 4096)")
    .option(
      '--sandbox-processes <n>',
      "processes of one run's code at once (env DEVICECLOUD_SANDBOX_PROCESSES; default 512)",
    )
    .option(
      '--sandbox-cpu-seconds <s>',
      "CPU time of one run's code (env DEVICECLOUD_SANDBOX_CPU_SECONDS; default 3600)",
    )
    .option('--sandbox-disk-mb <mib>', "what one run's code may write (env DEVICECLOUD_SANDBOX_DISK_MB; default 4096)")
    .option(
      '--sandbox-read-only <paths>',
      'more absolute paths the code may read, comma-separated (env DEVICECLOUD_SANDBOX_READ_ONLY)',
    )
    .option(
      '--cache-max-bytes <bytes>',
      'size cap of the input cache, least recently used out first (env DEVICECLOUD_AGENT_CACHE_MAX_BYTES; default 10 GiB)',
    );
}

/** Zip limits: checked at upload by servers, and again while unpacking by agents (keep them equal). */
export function addZipOptions(command: Command): Command {
  return command
    .option(
      '--zip-max-entries <n>',
      'most entries in a zip, at upload and when unpacked (env DEVICECLOUD_ZIP_MAX_ENTRIES; default 20000)',
    )
    .option(
      '--zip-max-expanded-bytes <bytes>',
      'most bytes a zip may expand to, counted while unpacking (env DEVICECLOUD_ZIP_MAX_EXPANDED_BYTES; default 4 GiB)',
    )
    .option(
      '--zip-max-ratio <n>',
      'most times its compressed size a zip may expand, beyond 64 MiB (env DEVICECLOUD_ZIP_MAX_RATIO; default 200)',
    );
}

/** Imports the config module when a command runs, not when it is declared (main.ts says why). */
export async function configFrom(
  options: Record<string, string | undefined>,
  defaults?: Partial<Config>,
): Promise<Config> {
  const { loadConfig } = await import('../config.ts');
  const sources: ConfigSources = {
    env: process.env,
    file: options.config,
    defaults,
    flags: {
      port: options.port,
      host: options.host,
      dataDir: options.dataDir,
      blobDir: options.blobDir,
      blobUrl: options.blobUrl,
      s3Endpoint: options.s3Endpoint,
      s3Region: options.s3Region,
      s3ForcePathStyle: options.s3ForcePathStyle,
      databaseUrl: options.databaseUrl,
      publicUrl: options.publicUrl,
      flavour: options.flavour,
      logLevel: options.logLevel,
      bodyLimit: options.bodyLimit,
      maxUploadBytes: options.maxUploadBytes,
      zipMaxEntries: options.zipMaxEntries,
      zipMaxExpandedBytes: options.zipMaxExpandedBytes,
      zipMaxRatio: options.zipMaxRatio,
      agentCacheMaxBytes: options.cacheMaxBytes,
      trustProxy: options.trustProxy,
      heartbeatMs: options.heartbeatMs,
      leaseMs: options.leaseMs,
      rateLimitPerUser: options.rateLimitPerUser,
      rateLimitPerIp: options.rateLimitPerIp,
      passwordGuessesPerAccount: options.passwordGuessesPerAccount,
      passwordGuessesPerAddress: options.passwordGuessesPerAddress,
      retentionIntervalMs: options.retentionIntervalMs,
      liveLogRetentionMs: options.liveLogRetentionMs,
      hookAllowNetworks: options.hookAllowNetworks,
      serverUrls: options.server,
      agentToken: options.token,
      driver: options.driver,
      virtualDevices: options.devices,
      virtualPrefix: options.serialPrefix,
      iosBinary: options.iosBin,
      iosSigningDir: options.iosSigning,
      iosSigner: options.iosSigner,
      sandbox: options.sandbox,
      sandboxNetwork: options.sandboxNetwork,
      sandboxUidBase: options.sandboxUidBase,
      sandboxMemoryMb: options.sandboxMemoryMb,
      sandboxProcesses: options.sandboxProcesses,
      sandboxCpuSeconds: options.sandboxCpuSeconds,
      sandboxDiskMb: options.sandboxDiskMb,
      sandboxReadOnly: options.sandboxReadOnly,
      apiKeyEncryptionKeyFile: options.apiKeyEncryptionKeyFile,
    },
  };
  return loadConfig(sources);
}
