import { SETTING_NAMES, settingsHelp } from '../settings.js';
import { COMMAND_NAMES, COMMAND_SPECS, distance } from './commands.js';

/**
 * Help beyond one command's: a command group (`gatehouse webhook --help`),
 * every setting (`gatehouse help settings`), and "did you mean" for a
 * mistyped flag. Generic over src/cli/commands.ts, so a command added there
 * is covered without a change here.
 */

/** The commands of a group word (`webhook` → `webhook create`, `webhook list`, …); empty when it is none. */
export function groupCommands(word: string | undefined): string[] {
  if (!word) return [];
  const w = word.toLowerCase();
  return COMMAND_NAMES.filter((n) => n.startsWith(`${w} `));
}

/** `gatehouse <group> --help`: the group's commands, one line each. */
export function groupHelp(word: string): string {
  const names = groupCommands(word);
  const width = Math.max(...names.map((n) => n.length)) + 2;
  return [
    `usage: gatehouse ${word.toLowerCase()} <${names.map((n) => n.split(' ')[1]).join('|')}> [options] [--json]`,
    '',
    'commands:',
    ...names.map((n) => `  ${n.padEnd(width)}${COMMAND_SPECS[n as keyof typeof COMMAND_SPECS].summary}`),
    '',
    `\`gatehouse ${names[0]} --help\` (or \`gatehouse help ${names[0]}\`) explains each option of one.`,
  ].join('\n');
}

/** `gatehouse help settings`: every setting with its flag and default. */
export function settingsPage(): string {
  return [
    `usage: gatehouse <command> [--flag value …]   (each of the ${SETTING_NAMES.length} settings below is a flag and a GATEHOUSE_* environment variable)`,
    '',
    'Settings come from flags (--auth-port 0), then GATEHOUSE_* environment variables, then defaults.',
    'Each command reads only the ones its --help lists; `serve` reads all. The table in docs/deployment.md says more.',
    '',
    settingsHelp(),
  ].join('\n');
}

/** `gatehouse help <topic>` for a topic that is not one command: the settings, or a group. */
export function helpTopic(words: readonly string[]): string | undefined {
  const [topic, next] = words;
  if (topic === 'settings' && words.length === 1) return settingsPage();
  if (groupCommands(topic).length && (next === undefined || next.startsWith('-'))) return groupHelp(topic!);
  return undefined;
}

/**
 * A group word without its command (`gatehouse webhook`, `gatehouse webhook --help`):
 * the group's help, asked for (stdout, exit 0) or not (stderr, exit 2).
 */
export function groupAnswer(argv: readonly string[]): { text: string; asked: boolean } | undefined {
  const [word, ...rest] = argv;
  if (!groupCommands(word).length || rest.some((w) => !w.startsWith('-'))) return undefined;
  return { text: groupHelp(word!), asked: rest.includes('--help') || rest.includes('-h') };
}

/** The flag a mistyped one was probably meant to be (`--usernme` → `--username`), among `known` (names without dashes). */
export function nearestFlag(typed: string, known: readonly string[]): string | undefined {
  const name = typed.replace(/^-+/, '').split('=')[0]!.toLowerCase();
  let best: { k: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(name, k);
    if (!best || d < best.d) best = { k, d };
  }
  return best && best.d <= Math.max(2, Math.floor(best.k.length / 4)) ? `--${best.k}` : undefined;
}
