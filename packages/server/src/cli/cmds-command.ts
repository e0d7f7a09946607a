import { HOOK_TRIGGERS } from '@filebrowser/contract';
import { Command } from 'commander';
import { addStoreOptions, withStore } from './database.js';
import { CliError, type CliIO } from './io.js';
import { indexRange } from './indexes.js';

function checkEvent(event: string): string {
  if (!(HOOK_TRIGGERS as readonly string[]).includes(event)) {
    throw new CliError(`unknown event "${event}": expected one of ${HOOK_TRIGGERS.join(', ')}`);
  }
  return event;
}

/** `filebrowser cmds add|ls|rm`: commands run before or after file events (hooks). */
export function cmdsCommand(io: CliIO): Command {
  const cmds = new Command('cmds')
    .description('manage the commands run on file events')
    .enablePositionalOptions();

  addStoreOptions(cmds.command('add'))
    .argument('<event>', `one of ${HOOK_TRIGGERS.join(', ')}`)
    .argument('<command...>', 'the command line (everything after the event, options included)')
    // Options after the event belong to the command line (`cmds add before_save echo -n`).
    .passThroughOptions()
    .description('add a command to an event')
    .action((event: string, words: string[], _opts, cmd: Command) =>
      withStore(cmd, io, async ({ store }) => {
        const settings = store.settings.get();
        const list = [...(settings.commands[checkEvent(event)] ?? []), words.join(' ')];
        await store.settings.save({ ...settings, commands: { ...settings.commands, [event]: list } });
        printEvents(io, { [event]: list });
      }),
    );

  addStoreOptions(cmds.command('ls'))
    .option('-e, --event <event>', 'only this event')
    .description('list the commands of every event')
    .action((opts: { event?: string }, cmd: Command) =>
      withStore(cmd, io, ({ store }) => {
        const all = store.settings.get().commands;
        printEvents(io, opts.event ? { [checkEvent(opts.event)]: all[opts.event] ?? [] } : all);
      }),
    );

  addStoreOptions(cmds.command('rm'))
    .argument('<event>')
    .argument('<index>', 'index of the command to remove (see "cmds ls")')
    .argument('[end]', 'remove every command from index to end')
    .description('remove a command, or a range of commands, of an event')
    .action((event: string, first: string, last: string | undefined, _opts, cmd: Command) =>
      withStore(cmd, io, async ({ store }) => {
        const settings = store.settings.get();
        const current = settings.commands[checkEvent(event)] ?? [];
        const [i, j] = indexRange(first, last, current.length, `commands of ${event}`);
        const list = current.filter((_c, k) => k < i || k > j);
        await store.settings.save({ ...settings, commands: { ...settings.commands, [event]: list } });
        printEvents(io, { [event]: list });
      }),
    );

  return cmds;
}

function printEvents(io: CliIO, events: Record<string, string[]>): void {
  for (const [event, list] of Object.entries(events)) {
    io.out(`${event}:\n`);
    for (const [i, c] of list.entries()) io.out(`  (${i}) ${c}\n`);
  }
}
