/**
 * `devicecloud admin …`: operators manage accounts directly against the store. Output never holds
 * an API key, except `create-user`'s: the new account's key, shown that once (as an agent token is
 * by `create-agent-token`, and a new encryption key by `generate-secrets-key`).
 */
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import { InvalidParameterError } from '../domain/errors.ts';
import { describeStorage } from '../domain/storage.ts';
import { checkEnum } from '../domain/text.ts';
import { PLANS, ROLES, type User } from '../domain/users.ts';
import type { Context } from '../services/context.ts';
import { registerSecretsCommands } from './secrets-commands.ts';
import { addStoreOptions, configFrom } from './options.ts';

export function registerAdminCommands(program: Command, print: (line: string) => void): void {
  const admin = program.command('admin').description('Manage accounts (runs against the database directly)');

  addStoreOptions(admin.command('create-user'))
    .description(
      'Create a user and print it with its API key, shown this once (with --json: one JSON object with id, email, apiKey, ...)',
    )
    .requiredOption('--email <email>', 'e-mail address, used to sign in')
    .requiredOption('--password <password>', 'password, at least 8 characters')
    .option('--plan <plan>', `${PLANS.join(', ')}`, 'SILVER')
    .option('--role <role>', `${ROLES.join(' or ')}`, 'USER')
    .option('--first-name <name>', 'first name')
    .option('--last-name <name>', 'last name')
    .option('--json', 'print JSON')
    .action(async (options) =>
      withStore(options, async (ctx) => {
        const { createUser } = await import('../services/users.ts');
        const user = await createUser(ctx, {
          email: options.email,
          password: options.password,
          plan: checkEnum('plan', options.plan, PLANS),
          role: checkEnum('role', options.role, ROLES),
          firstName: options.firstName,
          lastName: options.lastName,
        });
        printUser(print, user, options.json === true, user.apiKey);
      }),
    );

  addStoreOptions(admin.command('set-plan'))
    .description("Change a user's plan (queue priority and longest timeout)")
    .requiredOption('--user <id|email>', 'the user')
    .requiredOption('--plan <plan>', `${PLANS.join(', ')}`)
    .option('--json', 'print JSON')
    .action(async (options) =>
      withStore(options, async (ctx) => {
        const { findUser, setPlan } = await import('../services/users.ts');
        const user = await setPlan(ctx, await findUser(ctx, options.user), checkEnum('plan', options.plan, PLANS));
        printUser(print, user, options.json === true);
      }),
    );

  addStoreOptions(admin.command('set-role'))
    .description("Change a user's role (ADMIN may operate the cloud)")
    .requiredOption('--user <id|email>', 'the user')
    .requiredOption('--role <role>', `${ROLES.join(' or ')}`)
    .option('--json', 'print JSON')
    .action(async (options) =>
      withStore(options, async (ctx) => {
        const { findUser, setRole } = await import('../services/users.ts');
        const user = await setRole(ctx, await findUser(ctx, options.user), checkEnum('role', options.role, ROLES));
        printUser(print, user, options.json === true);
      }),
    );

  addStoreOptions(admin.command('set-quota'))
    .description("Set a user's storage quota (bytes of files and artifacts), or go back to their plan's default")
    .requiredOption('--user <id|email>', 'the user')
    .option('--bytes <bytes>', 'the quota in bytes (0: nothing more may be stored)')
    .option('--plan-default', "the plan's default quota (domain/storage.ts)")
    .option('--json', 'print JSON')
    .action(async (options) =>
      withStore(options, async (ctx) => {
        if ((options.bytes === undefined) === (options.planDefault !== true)) {
          throw new InvalidParameterError('bytes', 'Give either --bytes <bytes> or --plan-default');
        }
        const { findUser } = await import('../services/users.ts');
        const { parseQuotaInput, setStorageQuota } = await import('../services/storage.ts');
        const user = await findUser(ctx, options.user);
        const storage = await setStorageQuota(
          ctx,
          user,
          options.planDefault === true ? null : parseQuotaInput(options.bytes),
        );
        if (options.json === true)
          print(
            JSON.stringify({
              id: user.id,
              email: user.email,
              storageUsedBytes: storage.usedBytes,
              storageQuotaBytes: storage.quotaBytes,
            }),
          );
        else print(`User ${user.id} (${user.email}): ${describeStorage(storage)}`);
      }),
    );

  addStoreOptions(admin.command('create-agent-token'))
    .description('Create an agent (one per device host) and print its token; for an existing name, replace the token')
    .requiredOption('--name <name>', 'agent name, e.g. the host name')
    .option('--json', 'print JSON')
    .action(async (options) =>
      withStore(options, async (ctx) => {
        const { issueAgentToken } = await import('../services/agents.ts');
        const { agent, token } = await issueAgentToken(ctx, options.name);
        if (options.json === true) print(JSON.stringify({ id: agent.id, name: agent.name, token }));
        else print(`Agent ${agent.id} (${agent.name}); its token (shown once):\n  ${token}`);
      }),
    );

  registerSecretsCommands(admin, print, withStore);

  addStoreOptions(admin.command('list-users'))
    .description('List users')
    .option('--json', 'print JSON (one array)')
    .action(async (options) =>
      withStore(options, async (ctx) => {
        const users = await ctx.store.users.list();
        if (options.json === true) print(JSON.stringify(users.map((user) => userJson(user))));
        else for (const user of users) print(`${user.id}\t${user.email}\t${user.plan}\t${user.role}\t${user.status}`);
      }),
    );
}

export type WithStore = (
  options: Record<string, string | undefined>,
  work: (ctx: Context, config: Config) => Promise<void>,
) => Promise<void>;

const withStore: WithStore = async (options, work) => {
  const config = await configFrom(options);
  const { openStore, warnOfForeignKeys } = await import('../server/open-store.ts');
  const { database, ctx } = await openStore(config);
  try {
    // An operator on a machine without the cloud's keys would seal new keys no server can open.
    await warnOfForeignKeys(ctx, (message) => process.stderr.write(`warning: ${message}\n`));
    await work(ctx, config);
  } finally {
    await database.close();
  }
};

function userJson(user: User, apiKey?: string) {
  return {
    id: user.id,
    email: user.email,
    ...(apiKey !== undefined && { apiKey }),
    plan: user.plan,
    role: user.role,
    status: user.status,
    firstName: user.firstName,
    lastName: user.lastName,
    createTime: user.createTime,
  };
}

/** `apiKey` only for a user just created: the one time the key is printed. */
function printUser(print: (line: string) => void, user: User, json: boolean, apiKey?: string): void {
  if (json) {
    print(JSON.stringify(userJson(user, apiKey)));
    return;
  }
  print(`User ${user.id}: ${user.email}`);
  print(`  plan     ${user.plan}`);
  print(`  role     ${user.role}`);
  if (apiKey !== undefined)
    print(`  API key  ${apiKey}   (shown this once; the user sees it again on the dashboard's account page)`);
}
