/**
 * `devicecloud admin generate-secrets-key` and `rotate-secrets-key`: the keys that encrypt API
 * keys in the database (docs/deploy.md, "Secrets"). Output names keys by id, never shows one,
 * except `generate-secrets-key`, whose purpose is to give one.
 */
import type { Command } from 'commander';
import { KEYS_SETTING, keyFileOf, readKeyFile, writeKeyFile } from '../server/secret-keys.ts';
import { formatSecretKey } from '../domain/secret-keys.ts';
import { generateSecretKey } from '../services/secret-box.ts';
import { CliError } from './cli-error.ts';
import { addStoreOptions } from './options.ts';
import type { WithStore } from './admin-commands.ts';

export function registerSecretsCommands(admin: Command, print: (line: string) => void, withStore: WithStore): void {
  admin
    .command('generate-secrets-key')
    .description(
      `Print a new key (id:base64) for the setting ${KEYS_SETTING}: put it first, keep the old ones after it, then run rotate-secrets-key`,
    )
    .action(() => print(formatSecretKey(generateSecretKey())));

  addStoreOptions(admin.command('rotate-secrets-key'))
    .description(
      'Re-encrypt every API key with a new key. With the key file (the default), a new key is added to it first; ' +
        `with ${KEYS_SETTING}, the first key of the setting is used (put a new one first on every server, then run this)`,
    )
    .option('--reseal-only', 'add no key to the key file: re-encrypt with its first key')
    .option('--retire', 'then remove from the key file the keys that no longer encrypt anything')
    .option('--json', 'print JSON')
    .action(async (options) =>
      withStore(options, async (ctx, config) => {
        const file = keyFileOf(config);
        if (file !== undefined && options.resealOnly !== true)
          writeKeyFile(file, [generateSecretKey(), ...readKeyFile(file)]);
        const { resealApiKeys } = await import('../services/rotate-secrets.ts');
        const report = await resealApiKeys(ctx);
        const counts = Object.fromEntries(ctx.keyRing.ids().map((id) => [id, report.byKeyId.get(id) ?? 0]));
        const unknown = [...report.byKeyId.keys()].filter((id) => !(id in counts));
        if (unknown.length > 0)
          throw new CliError(
            `Some API keys are sealed with keys that are not configured (${unknown.join(', ')}): they cannot be re-encrypted`,
          );
        let retired: string[] = [];
        if (options.retire === true) {
          if (file === undefined)
            throw new CliError(
              `The keys come from ${KEYS_SETTING}: remove the old ones from it on every server yourself (every API key now uses ${report.keyId})`,
            );
          const keys = readKeyFile(file);
          const kept = keys.filter((key) => key.id === report.keyId || (report.byKeyId.get(key.id) ?? 0) > 0);
          retired = keys.filter((key) => !kept.includes(key)).map((key) => key.id);
          writeKeyFile(file, kept);
        }
        const origin = file === undefined ? `the setting ${KEYS_SETTING}` : `the key file ${file}`;
        if (options.json === true) {
          print(JSON.stringify({ keyId: report.keyId, resealed: report.resealed, keys: counts, retired, origin }));
          return;
        }
        print(`Key ${report.keyId} of ${origin} now encrypts every API key; ${report.resealed} re-encrypted.`);
        for (const [id, count] of Object.entries(counts)) print(`  ${id}  ${count} API key${count === 1 ? '' : 's'}`);
        if (retired.length > 0) print(`Retired: ${retired.join(', ')}`);
        else if (ctx.keyRing.ids().length > 1)
          print('Older keys stay to open what they encrypted; run again with --retire to remove the unused ones.');
      }),
    );
}
