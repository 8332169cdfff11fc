import { parseArgs, type ParseArgsConfig } from 'node:util';
import { flagsToEnv, loadConfig, type Config } from '../config.js';
import { SETTING_NAMES, flagOf } from '../settings.js';
import { nearestFlag } from './help.js';

/** Every setting is also a flag (`--auth-port 0` = GATEHOUSE_AUTH_PORT=0): src/settings.ts. */
const SETTING_FLAGS = SETTING_NAMES.map(flagOf);
type Options = NonNullable<ParseArgsConfig['options']>;
const settingOptions: Options = Object.fromEntries(SETTING_FLAGS.map((s) => [s, { type: 'string' as const }]));

/** A malformed command line: the usage is printed. Never an HTTP answer, so not a GatehouseError. */
export class UsageError extends Error {}

export function parse(args: string[], options: Options): { values: Record<string, unknown> } {
  const all: Options = { ...options, ...settingOptions, json: { type: 'boolean' } };
  try {
    return parseArgs({ args, options: all, strict: true, allowPositionals: false });
  } catch (e) {
    const unknown = (e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && /Unknown option '([^']+)'/.exec((e as Error).message)?.[1];
    if (unknown) {
      // Node's message goes on about positionals, which no command takes: name the nearest flag instead.
      const near = nearestFlag(unknown, [...Object.keys(all), 'help']);
      throw new UsageError(`Unknown option '${unknown}'.${near ? ` Did you mean ${near}?` : ''}`);
    }
    throw new UsageError((e as Error).message);
  }
}

export function configFrom(values: Record<string, unknown>): Config {
  const flags: Record<string, string> = {};
  for (const s of SETTING_FLAGS) if (typeof values[s] === 'string') flags[s] = values[s] as string;
  return loadConfig(process.env, flagsToEnv(flags));
}

/** The settings a command line names (its flags over the environment); for tests of the flags. */
export function configFromArgs(args: string[]): Config {
  return configFrom(parse(args, {}).values);
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

export function print(json: boolean, obj: Record<string, unknown>, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(obj)}\n` : `${human}\n`);
}
