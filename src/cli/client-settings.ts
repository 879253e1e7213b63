/**
 * Where the client commands find their server and API key: `--server`/`--api-key`, else
 * DEVICECLOUD_URL/DEVICECLOUD_API_KEY, else the file `devicecloud login` wrote
 * ($XDG_CONFIG_HOME/devicecloud/credentials.json, else ~/.config/…), readable by its owner only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError } from './cli-error.ts';

export interface ClientSettings {
  readonly url: string;
  readonly apiKey: string;
}

export function credentialsFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'devicecloud', 'credentials.json');
}

function readSaved(file: string): Partial<ClientSettings> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const saved = JSON.parse(text) as { url?: unknown; apiKey?: unknown };
    return {
      url: typeof saved.url === 'string' ? saved.url : undefined,
      apiKey: typeof saved.apiKey === 'string' ? saved.apiKey : undefined,
    };
  } catch {
    throw new CliError(`${file} is not valid JSON; run devicecloud login again`);
  }
}

export function checkServerUrl(value: string, from: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`Invalid server URL from ${from}: '${value}' (expected http://host:port)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(`Invalid server URL from ${from}: '${value}' must start with http:// or https://`);
  return value.replace(/\/+$/, '');
}

export function resolveClientSettings(
  flags: { server?: string; apiKey?: string },
  env: NodeJS.ProcessEnv = process.env,
): ClientSettings {
  const file = credentialsFile(env);
  const saved = readSaved(file);
  // An empty variable counts as unset, as shells and CI systems use it.
  const fromEnv = (name: string) => (env[name] === '' ? undefined : env[name]);
  const url = flags.server ?? fromEnv('DEVICECLOUD_URL') ?? saved.url;
  const apiKey = flags.apiKey ?? fromEnv('DEVICECLOUD_API_KEY') ?? saved.apiKey;
  if (url === undefined)
    throw new CliError('No server given: use --server URL, set DEVICECLOUD_URL, or run devicecloud login');
  if (apiKey === undefined || apiKey === '')
    throw new CliError('No API key given: use --api-key KEY, set DEVICECLOUD_API_KEY, or run devicecloud login');
  const from =
    flags.server !== undefined ? '--server' : fromEnv('DEVICECLOUD_URL') !== undefined ? 'DEVICECLOUD_URL' : file;
  return { url: checkServerUrl(url, from), apiKey };
}

/** Saves the settings for later commands, readable and writable by the user only. */
export function saveCredentials(settings: ClientSettings, env: NodeJS.ProcessEnv = process.env): string {
  const file = credentialsFile(env);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify({ url: settings.url, apiKey: settings.apiKey }, null, 2)}\n`, {
    mode: 0o600,
  });
  fs.chmodSync(temporary, 0o600);
  fs.renameSync(temporary, file);
  return file;
}
