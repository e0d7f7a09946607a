import { Command, CommanderError } from 'commander';
import { hashPassword } from '../auth/passwords.js';
import { ConfigError } from '../config/config-error.js';
import { booleanNames, SERVE_OPTIONS } from '../config/options.js';
import { addOptions, envName, flagValues, rewriteBooleanFlags } from '../config/sources.js';
import { COMMIT, VERSION } from '../config/defaults.js';
import { AppError } from '../errors.js';
import { backupCommand, restoreCommand } from './backup-command.js';
import { cmdsCommand } from './cmds-command.js';
import { configCommand } from './config-command.js';
import { dbCommand } from './db-command.js';
import { CliError, type CliIO } from './io.js';
import { locksCommand } from './locks-command.js';
import { rulesCommand } from './rules-command.js';
import { serve } from './serve.js';
import { releaseStartupGrowth } from '../startup-memory.js';
import { SERVER_SETTING_OPTIONS } from './server-flags.js';
import { SETTINGS_OPTIONS } from './settings-flags.js';
import { usersCommand } from './users-command.js';
import { USER_OPTIONS } from './user-flags.js';

export { processIO, type CliIO } from './io.js';

/** Every boolean flag of every command, for rewriting `--flag=false` before commander parses. */
const BOOLEAN_FLAGS = booleanNames(SERVE_OPTIONS, SERVER_SETTING_OPTIONS, SETTINGS_OPTIONS, USER_OPTIONS);

export function buildProgram(io: CliIO): Command {
  const program = new Command('filebrowser')
    .description('A web file manager. Without a command, serves the root folder.')
    // Options before a sub-command name belong to the program (`-p` is the port there, the
    // password in `users update`).
    .enablePositionalOptions()
    .argument('[command]')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.out(text),
      writeErr: (text) => io.err(text),
      // One line per error: commander puts its "(Did you mean ...?)" on a second one.
      outputError: (text) => io.err(text.trimEnd().replace(/\s*\n\s*/g, ' ') + '\n'),
    });
  addOptions(program, SERVE_OPTIONS);
  nameVariables(program);
  // Commands other than serving may do long work (imports, exports): full speed from the start.
  program.hook('preAction', (_program, action) => {
    if (action !== program) releaseStartupGrowth();
  });
  program.addHelpText('after', WHERE_OPTIONS_COME_FROM);
  program.action(async (unknown: string | undefined, _opts, cmd: Command) => {
    if (unknown !== undefined) throw new CliError(`unknown command "${unknown}"`);
    await serve(flagValues(cmd, SERVE_OPTIONS), io);
  });

  program.addCommand(configCommand(io));
  program.addCommand(usersCommand(io));
  program.addCommand(rulesCommand(io));
  program.addCommand(cmdsCommand(io));
  program.addCommand(locksCommand(io));
  program.addCommand(backupCommand(io));
  program.addCommand(restoreCommand(io));
  program.addCommand(dbCommand(io));
  program
    .command('hash')
    .argument('<password>')
    .description('print the bcrypt hash of a password (for --password)')
    .action(async (password: string) => io.out(`${await hashPassword(password)}\n`));
  program
    .command('version')
    .description('print the version')
    // File Browser's format: "File Browser v<version>/<short commit>".
    .action(() => io.out(`File Browser v${VERSION}/${COMMIT}\n`));

  // Sub-commands report errors the same way as the program.
  const inherit = (cmd: Command) => {
    for (const sub of cmd.commands) {
      sub.exitOverride().configureOutput(program.configureOutput());
      inherit(sub);
    }
  };
  inherit(program);
  return program;
}

/** Each serving option's help names its FB_* variable: `--port <value>  ... [FB_PORT]`. */
function nameVariables(program: Command): void {
  const layered = new Set(SERVE_OPTIONS.filter((s) => s.layered !== false).map((s) => s.name));
  for (const option of program.options) {
    const name = option.attributeName();
    if (layered.has(name) && !option.negate) option.description += ` [${envName(name)}]`;
  }
}

const WHERE_OPTIONS_COME_FROM = `
Every option in brackets can also come from that environment variable, or from a config file:
-c FILE, else the first of .filebrowser.json, .filebrowser.yaml, .filebrowser.yml found in the
current folder, then $HOME, then /etc/filebrowser (keys are the option names: {"port": 8080}).
Precedence: flag > FB_* variable > config file > value saved in the database > default.
`;

/** Runs the command line; resolves to the exit code (a served server keeps the process alive). */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  try {
    const program = buildProgram(io);
    await program.parseAsync(rewriteBooleanFlags(argv, BOOLEAN_FLAGS), { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander already printed its one-line message (or the help text).
      return err.exitCode;
    }
    io.err(`error: ${errorMessage(err)}\n`);
    return 1;
  }
}

function errorMessage(err: unknown): string {
  if (err instanceof AppError) return err.message || err.kind.replaceAll('_', ' ');
  if (err instanceof ConfigError || err instanceof CliError) return err.message;
  const e = err as NodeJS.ErrnoException;
  // Keep it to one line; the stack helps nobody running a command.
  return (e?.message ?? String(err)).split('\n')[0]!;
}
