import type { Rule } from '@filebrowser/contract';
import { Command } from 'commander';
import { validateRules } from '../rules/validate.js';
import type { Store } from '../store/index.js';
import { addStoreOptions, withStore } from './database.js';
import { CliError, type CliIO } from './io.js';
import { indexRange } from './indexes.js';
import { findUser } from './users-command.js';

interface TargetOptions {
  username?: string;
  id?: string;
}

/** `filebrowser rules add|ls|rm`: global rules, or one user's with -u/-i. */
export function rulesCommand(io: CliIO): Command {
  const rules = new Command('rules').description("manage global rules, or a user's with -u or -i");
  const withTarget = (cmd: Command) =>
    addStoreOptions(cmd)
      .option('-u, --username <username>', 'the rules of this user')
      .option('-i, --id <id>', 'the rules of the user with this id');

  withTarget(rules.command('add'))
    .argument('<path|regex>', 'a path prefix, or a regular expression with -r')
    .option('-a, --allow', 'allow the path (rules deny by default)')
    .option('-r, --regex', 'the rule is a regular expression')
    .description('add a rule')
    .action((pattern: string, opts: TargetOptions & { allow?: boolean; regex?: boolean }, cmd: Command) =>
      withStore(cmd, io, async ({ store }) => {
        const rule: Rule = {
          regex: !!opts.regex,
          allow: !!opts.allow,
          path: opts.regex ? '' : pattern,
          regexp: opts.regex ? { raw: pattern } : null,
        };
        validateRules([rule], 'the');
        const target = await ruleTarget(store, opts);
        await target.save([...target.rules, rule]);
        printRules(io, [...target.rules, rule]);
      }),
    );

  withTarget(rules.command('ls'))
    .description('list the rules')
    .action((opts: TargetOptions, cmd: Command) =>
      withStore(cmd, io, async ({ store }) => printRules(io, (await ruleTarget(store, opts)).rules)),
    );

  withTarget(rules.command('rm'))
    .argument('[index]', 'index of the rule to remove (see "rules ls")')
    .argument('[end]', 'remove every rule from index to end')
    .option('--index <index>', 'same as the index argument (File Browser scripts pass it)')
    .description('remove a rule, or a range of rules')
    .action(
      (
        first: string | undefined,
        last: string | undefined,
        opts: TargetOptions & { index?: string },
        cmd: Command,
      ) =>
        withStore(cmd, io, async ({ store }) => {
          const start = first ?? opts.index;
          if (start === undefined) throw new CliError('give the index of the rule to remove');
          const target = await ruleTarget(store, opts);
          const [i, j] = indexRange(start, last, target.rules.length, 'rules');
          const next = target.rules.filter((_r, k) => k < i || k > j);
          await target.save(next);
          printRules(io, next);
        }),
    );

  return rules;
}

interface RuleTarget {
  rules: Rule[];
  save(rules: Rule[]): Promise<unknown>;
}

async function ruleTarget(store: Store, opts: TargetOptions): Promise<RuleTarget> {
  if (opts.username !== undefined && opts.id !== undefined) {
    throw new CliError('give either --username or --id, not both');
  }
  const ref = opts.username ?? opts.id;
  if (ref !== undefined) {
    if (opts.id !== undefined && !/^\d+$/.test(opts.id)) throw new CliError(`"${opts.id}" is not a user id`);
    const user = opts.id !== undefined ? await findUser(store, opts.id) : await findUserByName(store, ref);
    return { rules: user.rules, save: (rules) => store.users.update({ ...user, rules }) };
  }
  const settings = store.settings.get();
  return { rules: settings.rules, save: async (rules) => await store.settings.save({ ...settings, rules }) };
}

async function findUserByName(store: Store, username: string) {
  const user = await store.users.getByUsername(username);
  if (!user) throw new CliError(`user "${username}" does not exist`);
  return user;
}

function printRules(io: CliIO, rules: Rule[]): void {
  if (rules.length === 0) {
    io.out('No rules.\n');
    return;
  }
  for (const [i, r] of rules.entries()) {
    const verdict = r.allow ? 'allow' : 'deny';
    const what = r.regex ? `regex ${r.regexp?.raw ?? ''}` : `path ${r.path}`;
    io.out(`(${i}) ${verdict} ${what}\n`);
  }
}
