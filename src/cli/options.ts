/** Command-line options shared by the roles, and their mapping onto the config schema. */
import type { Command } from 'commander';
import { type Config, type ConfigSources, loadConfig } from '../config.ts';

export function addStoreOptions(command: Command): Command {
  return command
    .option('--data-dir <dir>', 'where SQLite and files live (env DEVICECLOUD_DATA_DIR; default ./data)')
    .option('--database-url <url>', 'postgres://… to use PostgreSQL instead of SQLite (env DATABASE_URL)')
    .option('--config <file>', 'JSON file of settings (env DEVICECLOUD_CONFIG)');
}

export function addServerOptions(command: Command): Command {
  return addStoreOptions(command)
    .option('--blob-dir <dir>', 'where uploads and artifacts live, shared by all servers (env DEVICECLOUD_BLOB_DIR; default <data-dir>/blobs)')
    .option('--port <port>', 'port to listen on (env DEVICECLOUD_PORT; default 8080)')
    .option('--host <host>', 'address to listen on (env DEVICECLOUD_HOST; default 127.0.0.1)')
    .option('--public-url <url>', 'public base URL for links, may include a context path (env DEVICECLOUD_PUBLIC_URL)')
    .option('--flavour <flavour>', 'public, private or enterprise (env DEVICECLOUD_FLAVOUR; default private)')
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (env DEVICECLOUD_LOG_LEVEL)')
    .option('--body-limit <bytes>', 'largest form or JSON body (env DEVICECLOUD_BODY_LIMIT)')
    .option('--max-upload-bytes <bytes>', 'largest uploaded file (env DEVICECLOUD_MAX_UPLOAD_BYTES; default 4 GiB)')
    .option('--trust-proxy <bool>', 'trust X-Forwarded-* headers from a load balancer (env DEVICECLOUD_TRUST_PROXY)')
    .option('--heartbeat-ms <ms>', 'how often agents heartbeat (env DEVICECLOUD_HEARTBEAT_MS; default 5000)')
    .option('--lease-ms <ms>', 'a silent agent loses its running device runs after this (env DEVICECLOUD_LEASE_MS; default 60000)')
    .option('--rate-limit-per-user <n>', 'requests per minute per user, 0 for none (env DEVICECLOUD_RATE_LIMIT_PER_USER; default 3000)')
    .option('--rate-limit-per-ip <n>', 'requests per minute per address on anonymous routes, 0 for none (env DEVICECLOUD_RATE_LIMIT_PER_IP; default 300)')
    .option('--password-guesses-per-account <n>', 'failed sign-ins per account in 15 minutes, from any address, 0 for none (env DEVICECLOUD_PASSWORD_GUESSES_PER_ACCOUNT; default 10)')
    .option('--password-guesses-per-address <n>', 'failed sign-ins per address in 15 minutes, 0 for none (env DEVICECLOUD_PASSWORD_GUESSES_PER_ADDRESS; default 50)')
    .option('--retention-interval-ms <ms>', 'how often old runs and unused projects are cleared (env DEVICECLOUD_RETENTION_INTERVAL_MS; default 3600000)')
    .option('--hook-allow-networks <cidrs>', 'internal networks run-finished hooks may reach, e.g. 10.20.0.0/16,127.0.0.1 (env DEVICECLOUD_HOOK_ALLOW_NETWORKS; default none)');
}

/** The device options of every role that runs an agent (`agent`, and `local`'s embedded one). */
export function addDriverOptions(command: Command): Command {
  return command
    .option('--driver <driver>', 'virtual, adb or ios (env DEVICECLOUD_DRIVER; default virtual)')
    .option('--devices <n>', 'virtual driver: number of devices, two thirds Android (env DEVICECLOUD_DEVICES; default 6)')
    .option('--serial-prefix <prefix>', 'virtual driver: start of the device serials, different on each host of a cloud (env DEVICECLOUD_SERIAL_PREFIX; default virtual)')
    .option('--ios-bin <file>', 'ios driver: the go-ios executable (env DEVICECLOUD_IOS_BIN; default: the go-ios npm package, else ios on PATH)')
    .option('--ios-signing <dir>', "ios driver: folder with the service's profile.mobileprovision and identity.p12 (env DEVICECLOUD_IOS_SIGNING_DIR)")
    .option('--ios-signer <signer>', 'ios driver: go-ios, or the path of zsign (env DEVICECLOUD_IOS_SIGNER; default go-ios)');
}

export function configFrom(options: Record<string, string | undefined>, defaults?: Partial<Config>): Config {
  const sources: ConfigSources = {
    env: process.env,
    file: options.config,
    defaults,
    flags: {
      port: options.port,
      host: options.host,
      dataDir: options.dataDir,
      blobDir: options.blobDir,
      databaseUrl: options.databaseUrl,
      publicUrl: options.publicUrl,
      flavour: options.flavour,
      logLevel: options.logLevel,
      bodyLimit: options.bodyLimit,
      maxUploadBytes: options.maxUploadBytes,
      trustProxy: options.trustProxy,
      heartbeatMs: options.heartbeatMs,
      leaseMs: options.leaseMs,
      rateLimitPerUser: options.rateLimitPerUser,
      rateLimitPerIp: options.rateLimitPerIp,
      passwordGuessesPerAccount: options.passwordGuessesPerAccount,
      passwordGuessesPerAddress: options.passwordGuessesPerAddress,
      retentionIntervalMs: options.retentionIntervalMs,
      hookAllowNetworks: options.hookAllowNetworks,
      serverUrls: options.server,
      agentToken: options.token,
      driver: options.driver,
      virtualDevices: options.devices,
      virtualPrefix: options.serialPrefix,
      iosBinary: options.iosBin,
      iosSigningDir: options.iosSigning,
      iosSigner: options.iosSigner,
    },
  };
  return loadConfig(sources);
}
