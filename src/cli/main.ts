import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, flagsToEnv, loadConfig, type Config } from '../config.js';
import { createClient, createUser, describeClient, InputError } from '../core/admin.js';
import { systemClock } from '../core/ports.js';
import { KeyRing } from '../core/oauth/keys.js';
import { argon2Hasher } from '../infra/argon2.js';
import { openStorage, UsernameTakenError } from '../store/index.js';
import { startGatehouse } from '../server.js';
import { WEBHOOK_USAGE, webhookCommands } from './webhook.js';
import { BotInputError, createBot } from '../core/bot/manage.js';
import { BotUsernameTakenError } from '../core/bot/ports.js';
import { botStorage } from '../store/bot/index.js';

/** Settings every command accepts as flags (`--auth-port 0` = GATEHOUSE_AUTH_PORT=0). */
const SETTINGS = ['database-url', 'redis-url', 'host', 'auth-port', 'api-port', 'bot-port', 'roles', 'auth-url', 'api-url', 'bot-api-url',
  'allow-private-webhooks', 'admin-token', 'access-token-ttl', 'code-ttl', 'refresh-token-ttl', 'session-ttl', 'token-endpoint-get',
  'open-token-key', 'trust-proxy', 'log-level', 'redis-prefix', 'token-verification', 'introspection-cache-ttl', 'introspection-client-id',
  'introspection-client-secret', 'tls-cert', 'tls-key', 'client-cert-header', 'providers-file'] as const;
type Options = NonNullable<ParseArgsConfig['options']>;
const settingOptions: Options = Object.fromEntries(SETTINGS.map((s) => [s, { type: 'string' as const }]));

const USAGE = `usage: gatehouse <command> [options] [--json]

  serve                                   run the configured roles (default: all)
  user create --username U --email E --password-stdin [--name N]
  client create --name N --redirect-uri U [--redirect-uri U2 …] [--grant-types a,b] [--scope "s1 s2"]
                [--public] [--auth-method M] [--trusted] [--introspect] [--domain D] [--token-format jwt|opaque]
                [--post-logout-redirect-uri U …] [--backchannel-logout-uri U]
                [--tls-client-certificate FILE] [--allowed-addresses CIDR,…]
  client list
  keys rotate
  bot create --owner U --username X_bot --name N   a bot owned by user U; prints its token once
${WEBHOOK_USAGE}

Settings come from flags (--auth-port 0), then GATEHOUSE_* environment variables, then defaults.`;

class UsageError extends Error {}

function parse(args: string[], options: Options): { values: Record<string, unknown> } {
  try {
    return parseArgs({ args, options: { ...options, ...settingOptions, json: { type: 'boolean' } }, strict: true, allowPositionals: false });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function configFrom(values: Record<string, unknown>): Config {
  const flags: Record<string, string> = {};
  for (const s of SETTINGS) if (typeof values[s] === 'string') flags[s] = values[s] as string;
  return loadConfig(process.env, flagsToEnv(flags));
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

function print(json: boolean, obj: Record<string, unknown>, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(obj)}\n` : `${human}\n`);
}

async function withStorage<T>(config: Config, fn: (s: Awaited<ReturnType<typeof openStorage>>) => Promise<T>): Promise<T> {
  const storage = await openStorage(config.databaseUrl);
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
}

async function serve(args: string[]): Promise<void> {
  const { values } = parse(args, {});
  const running = await startGatehouse(configFrom(values));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    running.logger.info({ signal }, 'shutting down');
    running.close().then(() => process.exit(0), (err) => {
      running.logger.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function userCreate(args: string[]): Promise<void> {
  const { values } = parse(args, {
    username: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' },
    'password-stdin': { type: 'boolean' },
  });
  if (!values['password-stdin']) throw new UsageError('--password-stdin is required (passwords are never taken as arguments)');
  const password = await readStdin();
  const config = configFrom(values);
  const user = await withStorage(config, (s) =>
    createUser(s, argon2Hasher(), systemClock, { username: String(values.username ?? ''), email: String(values.email ?? ''), password, name: (values.name as string) ?? null }));
  print(Boolean(values.json), { id: user.id, username: user.username, email: user.email }, `created user ${user.username} (${user.id})`);
}

/** `--tls-client-certificate FILE`: the PEM the client will present (RFC 8705 self_signed_tls_client_auth). */
function readCertificateFile(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError(`--tls-client-certificate: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

async function clientCreate(args: string[]): Promise<void> {
  const { values } = parse(args, {
    name: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true }, 'grant-types': { type: 'string' },
    scope: { type: 'string' }, public: { type: 'boolean' }, 'auth-method': { type: 'string' }, trusted: { type: 'boolean' },
    introspect: { type: 'boolean' }, domain: { type: 'string' }, 'token-format': { type: 'string' },
    'post-logout-redirect-uri': { type: 'string', multiple: true }, 'backchannel-logout-uri': { type: 'string' },
    'tls-client-certificate': { type: 'string' }, 'allowed-addresses': { type: 'string' },
  });
  const config = configFrom(values);
  const { client, secret } = await withStorage(config, (s) => createClient(s, systemClock, {
    name: String(values.name ?? ''),
    redirectUris: (values['redirect-uri'] as string[] | undefined) ?? [],
    grantTypes: (values['grant-types'] as string | undefined)?.split(',').map((g) => g.trim()).filter(Boolean),
    scope: values.scope as string | undefined,
    public: Boolean(values.public),
    authMethod: values['auth-method'] as string | undefined,
    trusted: Boolean(values.trusted),
    introspect: Boolean(values.introspect),
    domain: (values.domain as string | undefined) ?? null,
    tokenFormat: values['token-format'] as string | undefined,
    // OpenID Connect RP-initiated logout and back-channel logout.
    postLogoutRedirectUris: values['post-logout-redirect-uri'] as string[] | undefined,
    backchannelLogoutUri: values['backchannel-logout-uri'] as string | undefined,
    tlsClientCertificate: readCertificateFile(values['tls-client-certificate'] as string | undefined),
    allowedAddresses: (values['allowed-addresses'] as string | undefined)?.split(','),
  }));
  const d = describeClient(client, secret);
  const out = { client_id: d.client_id, ...(secret ? { client_secret: secret } : {}), redirect_uris: d.redirect_uris, grant_types: d.grant_types, scope: d.scope,
    token_endpoint_auth_method: d.token_endpoint_auth_method, token_format: d.token_format,
    ...(client.postLogoutRedirectUris.length ? { post_logout_redirect_uris: client.postLogoutRedirectUris } : {}),
    ...(client.backchannelLogoutUri ? { backchannel_logout_uri: client.backchannelLogoutUri } : {}),
    ...(client.tlsCertThumbprint ? { tls_client_certificate_thumbprint: client.tlsCertThumbprint } : {}),
    ...(client.allowedAddresses?.length ? { allowed_addresses: client.allowedAddresses } : {}) };
  print(Boolean(values.json), out, `client_id: ${client.id}${secret ? `\nclient_secret: ${secret}\n(the secret is shown once; only its hash is stored)` : ''}`);
}

async function clientList(args: string[]): Promise<void> {
  const { values } = parse(args, {});
  const clients = await withStorage(configFrom(values), (s) => s.clients.list());
  print(Boolean(values.json), { clients: clients.map((c) => describeClient(c)) }, clients.map((c) => `${c.id}  ${c.name}  [${c.grantTypes.join(',')}]`).join('\n') || '(no clients)');
}

async function keysRotate(args: string[]): Promise<void> {
  const { values } = parse(args, {});
  const config = configFrom(values);
  const key = await withStorage(config, async (s) => {
    const ring = new KeyRing(s.keys, systemClock);
    await ring.init();
    // Old keys stay published until every token they signed has expired.
    return ring.rotate(Date.now() + config.accessTokenTtl * 1000 + 60_000);
  });
  print(Boolean(values.json), { kid: key.kid, alg: key.alg }, `new signing key ${key.kid} (${key.alg}); previous keys stay published until their tokens expire`);
}

async function botCreate(args: string[]): Promise<void> {
  const { values } = parse(args, { owner: { type: 'string' }, username: { type: 'string' }, name: { type: 'string' } });
  const { bot, token } = await withStorage(configFrom(values), async (s) => {
    const owner = await s.users.findByUsername(String(values.owner ?? '')) ?? await s.users.get(String(values.owner ?? ''));
    if (!owner) throw new InputError('--owner must name an existing user');
    try {
      return await createBot(botStorage(s), systemClock, { ownerUserId: owner.id, username: String(values.username ?? ''), name: String(values.name ?? '') });
    } catch (e) {
      if (e instanceof BotInputError || e instanceof BotUsernameTakenError) throw new InputError(e.message);
      throw e;
    }
  });
  print(Boolean(values.json), { id: bot.id, username: bot.username, token }, `created bot @${bot.username} (${bot.id})\ntoken: ${token}\n(the token is shown once; only its hash is stored)`);
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  serve,
  'user create': userCreate,
  'client create': clientCreate,
  'client list': clientList,
  'keys rotate': keysRotate,
  'bot create': botCreate,
  ...webhookCommands({ parse, configFrom, print, withStorage }),
};

export async function main(argv: string[]): Promise<number> {
  const [a, b, ...rest] = argv;
  const cmd = a && COMMANDS[a] ? a : a && b && COMMANDS[`${a} ${b}`] ? `${a} ${b}` : undefined;
  if (!cmd || a === '--help' || a === 'help') {
    process.stderr.write(`${USAGE}\n`);
    return cmd || a === '--help' || a === 'help' ? 0 : 2;
  }
  const args = cmd === a ? [b, ...rest].filter((x): x is string => x !== undefined) : rest;
  try {
    await COMMANDS[cmd]!(args);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`gatehouse: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    if (e instanceof InputError || e instanceof ConfigError || e instanceof UsernameTakenError) {
      process.stderr.write(`gatehouse: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`gatehouse: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}
