import { readFileSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import type { Config } from '../config.js';
import { flagOf, SETTINGS, type SettingName } from '../settings.js';

/** The version in package.json (`gatehouse --version`). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Plain text when a person reads the output (a terminal) and nobody asked
 * for a format; JSON otherwise, so log collectors, tests and CI keep
 * reading one JSON object a line.
 */
export function logFormatFor(config: Pick<Config, 'logFormat'>, stdoutIsTerminal: boolean): 'json' | 'text' {
  return config.logFormat ?? (stdoutIsTerminal ? 'text' : 'json');
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** One pino JSON line as a person reads it: `12:00:01 INFO  message  key=value`. */
export function textLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const { level, time, msg, err, worker, ...rest } = o;
  const at = typeof time === 'number' ? new Date(time).toISOString().slice(11, 19) : '';
  // The fields of an info line repeat its message (the start lines); warnings and errors keep theirs.
  const extra = level === 30 ? '' : Object.entries(rest).filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
  const error = err && typeof err === 'object' ? ` (${String((err as { message?: unknown }).message ?? '')})` : '';
  // GATEHOUSE_WORKERS above 1: which process wrote the line (0 is the primary).
  const who = worker === undefined ? '' : `[${worker === 0 ? 'primary' : `worker ${String(worker)}`}] `;
  return `${at} ${(LEVELS[level as number] ?? String(level)).padEnd(5)} ${who}${String(msg ?? '')}${error}${extra ? `  ${extra}` : ''}\n`;
}

/** The logger of `serve`: pino's JSON, or the same records as plain lines. */
export function serveLogger(config: Config, format: 'json' | 'text', out: NodeJS.WritableStream = process.stdout): Logger | undefined {
  // JSON: startGatehouse makes its usual logger.
  if (format === 'json') return undefined;
  return pino({ level: config.logLevel, base: undefined }, { write: (line: string) => out.write(textLine(line)) });
}

/** The logger of one process of a `serve` with several (GATEHOUSE_WORKERS): every line names it (`worker`, 0: the primary). */
export function clusterLogger(config: Config, format: 'json' | 'text', worker: number, out: NodeJS.WritableStream = process.stdout): Logger {
  const base = { worker, pid: process.pid };
  if (format === 'json') return pino({ level: config.logLevel, base });
  return pino({ level: config.logLevel, base }, { write: (line: string) => out.write(textLine(line)) });
}

export interface BannerInput {
  version: string;
  authUrl: string;
  apiUrl: string | undefined;
  botUrl: string | undefined;
  metricsUrl: string | undefined;
  databaseUrl: string;
  hasUser: boolean;
}

/** The database flag the next command needs when the database is not the default one. */
function databaseArg(databaseUrl: string): string {
  if (databaseUrl === SETTINGS.GATEHOUSE_DATABASE_URL.default) return '';
  return ` --${flagOf('GATEHOUSE_DATABASE_URL')} '${databaseUrl.replace(/'/g, "'\\''")}'`;
}

/** What `serve` prints on a terminal once it answers: where it is, and what to do next. */
export function startBanner(b: BannerInput): string {
  const row = (label: string, url: string, what: string) => `  ${label.padEnd(22)}${url}  ${what}`;
  const lines = [
    '',
    `Gatehouse ${b.version} is running`,
    row('authorization server', b.authUrl, `sign-in pages, admin console ${b.authUrl}/admin`),
    ...(b.apiUrl ? [row('resource server', b.apiUrl, `${b.apiUrl}/user`)] : []),
    ...(b.botUrl ? [row('chat-bot interface', b.botUrl, 'chat page and Bot API')] : []),
    ...(b.metricsUrl ? [row('metrics', `${b.metricsUrl}/metrics`, 'Prometheus')] : []),
    `  ${'database'.padEnd(22)}${b.databaseUrl.startsWith('sqlite:') ? b.databaseUrl : 'postgres'}`,
    '',
  ];
  if (!b.hasUser) {
    lines.push('There is no user yet. In another terminal, create the first one (an administrator of the console):',
      `  echo 'choose a long password' | npx gatehouse user create --username admin --email admin@example.com --password-stdin --admin${databaseArg(b.databaseUrl)}`,
      '');
  }
  lines.push('Stop with Ctrl+C. `npx gatehouse --help` lists the commands.', '');
  return lines.join('\n');
}

/** An error a person can act on; printed as its message, without a stack. */
export class CliFailure extends Error {}

/** The listener settings, in the order a busy port is looked up. */
const PORT_SETTINGS: readonly [SettingName, keyof Config][] = [
  ['GATEHOUSE_AUTH_PORT', 'authPort'], ['GATEHOUSE_API_PORT', 'apiPort'], ['GATEHOUSE_BOT_PORT', 'botPort'], ['GATEHOUSE_METRICS_PORT', 'metricsPort'],
];

/** `port 8080 is in use: set GATEHOUSE_AUTH_PORT or --auth-port`, for a listen error; undefined for any other error. */
export function listenFailure(config: Config, e: unknown): CliFailure | undefined {
  const err = e as NodeJS.ErrnoException & { port?: number };
  if (err?.code !== 'EADDRINUSE' && err?.code !== 'EACCES') return undefined;
  const port = err.port;
  const found = PORT_SETTINGS.find(([, key]) => config[key] === port);
  const change = found ? `set ${found[0]} or --${flagOf(found[0])} to a free port (0 picks one)` : 'choose another port';
  const what = err.code === 'EADDRINUSE' ? 'is in use' : 'may not be opened by this user';
  return new CliFailure(`port ${port ?? '?'} on ${config.host} ${what}: ${change}`);
}
