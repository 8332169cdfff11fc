import { ConfigError } from '../config.js';
import { GatehouseError } from '../core/errors.js';
import { SecretKeyError } from '../core/secret-box.js';
import { PendingMigrationsError } from '../store/pending-migrations.js';
import { serve as runServe } from './serve.js';
import { configFrom, parse, UsageError } from './args.js';
import { closestCommand, COMMAND_NAMES, commandHelp, overviewHelp, parserOptions, type CommandName } from './commands.js';
import { CliFailure, packageVersion } from './terminal.js';
import { groupAnswer, helpTopic } from './help.js';

export { configFromArgs } from './args.js';

async function serve(args: string[]): Promise<void> {
  const { values } = parse(args, parserOptions('serve'));
  await runServe(configFrom(values));
}

/** `serve`, or one of the commands on the database (loaded only when it runs). */
async function run(cmd: CommandName, args: string[]): Promise<void> {
  if (cmd === 'serve') return serve(args);
  const { DATABASE_COMMANDS } = await import('./database-commands.js');
  // Every declared command (src/cli/commands.ts) has a handler, and every handler a declaration.
  const handled = ['serve', ...Object.keys(DATABASE_COMMANDS)].sort().join();
  if (handled !== [...COMMAND_NAMES].sort().join()) throw new Error(`src/cli/commands.ts declares other commands than main.ts handles: ${handled}`);
  await DATABASE_COMMANDS[cmd]!(args);
}

/** The command `argv` starts with (one or two words), and the arguments after it. */
function commandOf(argv: readonly string[]): { cmd: CommandName; args: string[] } | undefined {
  const [a, b] = argv;
  const isCommand = (n: string | undefined): n is CommandName => n !== undefined && (COMMAND_NAMES as string[]).includes(n);
  if (isCommand(a)) return { cmd: a, args: argv.slice(1) };
  const two = a && b ? `${a} ${b}` : undefined;
  return isCommand(two) ? { cmd: two, args: argv.slice(2) } : undefined;
}

function unknownCommand(argv: readonly string[]): number {
  const typed = argv.filter((w) => !w.startsWith('-')).slice(0, 2).join(' ') || argv[0] || '';
  const near = closestCommand(argv);
  process.stderr.write(`gatehouse: unknown command "${typed}"${near ? `; did you mean "gatehouse ${near}"?` : ''}\n` +
    'usage: gatehouse <command> [options]; `gatehouse --help` lists the commands\n');
  return 2;
}

export async function main(argv: string[]): Promise<number> {
  const [first] = argv;
  if (first === '--version' || first === '-V' || first === 'version') {
    process.stdout.write(`gatehouse ${packageVersion()}\n`);
    return 0;
  }
  if (first === undefined || first === '--help' || first === '-h') {
    // No command at all is a mistake (exit 2); asking for help is not.
    (first === undefined ? process.stderr : process.stdout).write(`${overviewHelp()}\n`);
    return first === undefined ? 2 : 0;
  }
  if (first === 'help') {
    if (argv.length === 1) {
      process.stdout.write(`${overviewHelp()}\n`);
      return 0;
    }
    // `help settings`, `help webhook`: a page that is not one command's.
    const topic = helpTopic(argv.slice(1));
    if (topic !== undefined) {
      process.stdout.write(`${topic}\n`);
      return 0;
    }
    const asked = commandOf(argv.slice(1));
    if (!asked) return unknownCommand(argv.slice(1));
    process.stdout.write(`${commandHelp(asked.cmd)}\n`);
    return 0;
  }
  const found = commandOf(argv);
  // A group word alone (`gatehouse webhook --help`): its commands, not "unknown command".
  const group = found ? undefined : groupAnswer(argv);
  if (group) {
    (group.asked ? process.stdout : process.stderr).write(`${group.text}\n`);
    return group.asked ? 0 : 2;
  }
  if (!found) return unknownCommand(argv);
  const { cmd, args } = found;
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${commandHelp(cmd)}\n`);
    return 0;
  }
  try {
    await run(cmd, args);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`gatehouse ${cmd}: ${e.message}\n\n${commandHelp(cmd)}\n`);
      return 2;
    }
    // A refused input (a GatehouseError: its description is written for people), bad settings, a bad key file, a busy port, pending migrations.
    if (e instanceof GatehouseError || e instanceof ConfigError || e instanceof SecretKeyError || e instanceof CliFailure || e instanceof PendingMigrationsError) {
      process.stderr.write(`gatehouse: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`gatehouse: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}
