/**
 * The commands that work on the database directly (every command but
 * `serve`): loaded by main.ts only when one of them runs, so that `serve`
 * (and each worker of GATEHOUSE_WORKERS) does not load what only they use.
 */
import { readFileSync } from 'node:fs';
import type { Config } from '../config.js';
import { createClient, createUserRecorded, describeClient } from '../core/admin.js';
import { invalidRequest } from '../core/errors.js';
import { systemClock } from '../core/ports.js';
import { KeyRing } from '../core/oauth/keys.js';
import { argon2Hasher } from '../infra/argon2.js';
import { openStorage } from '../store/index.js';
import { webhookCommands } from './event-webhooks.js';
import { BotInputError, createBot } from '../core/bot/manage.js';
import { BotUsernameTakenError } from '../core/bot/ports.js';
import { secretKeyCommands } from './secret-key.js';
import { registrationCommands } from './registration.js';
import { accessCommands } from './access.js';
import { userLockCommands } from './user-lock.js';
import { userAccountCommands } from './user-accounts.js';
import { userInviteCommands } from './user-invite.js';
import { configFrom, parse, print, readStdin, UsageError } from './args.js';
import { parserOptions } from './commands.js';

async function withStorage<T>(config: Config, fn: (s: Awaited<ReturnType<typeof openStorage>>) => Promise<T>): Promise<T> {
  const storage = await openStorage(config.databaseUrl, { secretKey: config.secretKey });
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
}

/** `gatehouse migrate`: the one step of an upgrade that changes the schema (docs/deployment.md, "Upgrading"). */
async function migrate(args: string[]): Promise<void> {
  const { values } = parse(args, parserOptions('migrate'));
  const config = configFrom(values);
  let applied: string[] = [];
  const storage = await openStorage(config.databaseUrl, { secretKey: config.secretKey, onMigrated: (names) => (applied = names) });
  await storage.close();
  print(Boolean(values.json), { applied },
    applied.length ? `applied ${applied.length} migration(s):\n${applied.map((n) => `  ${n}`).join('\n')}` : 'the database is up to date: no migration pending');
}

async function userCreate(args: string[]): Promise<void> {
  const { values } = parse(args, parserOptions('user create'));
  if (!values['password-stdin']) throw new UsageError('--password-stdin is required (passwords are never taken as arguments)');
  const password = await readStdin();
  const config = configFrom(values);
  const user = await withStorage(config, async (s) => {
        const u = await createUserRecorded(s, argon2Hasher(), systemClock, { username: String(values.username ?? ''), email: String(values.email ?? ''), password, name: (values.name as string) ?? null }, 'cli');
    if (values.admin) await s.console.setAdmin(u.id, true);
    return u;
  });
  print(Boolean(values.json), { id: user.id, username: user.username, email: user.email },
    `created user ${user.username} (${user.id})${values.admin ? `, an administrator: signs in to the admin console at ${config.authUrl.replace(/\/+$/, '')}/admin` : ''}`);
}

/** `--tls-client-certificate FILE`: the PEM the client will present (RFC 8705 self_signed_tls_client_auth). */
function readCertificateFile(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw invalidRequest(`--tls-client-certificate: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

async function clientCreate(args: string[]): Promise<void> {
  const { values } = parse(args, parserOptions('client create'));
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
    idTokenAlg: values['id-token-alg'] as string | undefined,
    requirePar: Boolean(values['require-par']),
    dpop: Boolean(values.dpop),
    publicTokenExchange: Boolean(values['public-token-exchange']),
    jwks: values.jwks as string | undefined,
    jwksUri: values['jwks-uri'] as string | undefined,
    resources: values.resource as string[] | undefined,
    backchannelTokenDeliveryMode: values['backchannel-token-delivery-mode'] as string | undefined,
    backchannelNotificationEndpoint: values['backchannel-notification-endpoint'] as string | undefined,
  }));
  const d = describeClient(client, secret);
  const out = { client_id: d.client_id, ...(secret ? { client_secret: secret } : {}), redirect_uris: d.redirect_uris, grant_types: d.grant_types, scope: d.scope,
    token_endpoint_auth_method: d.token_endpoint_auth_method, token_format: d.token_format,
    ...(client.postLogoutRedirectUris.length ? { post_logout_redirect_uris: client.postLogoutRedirectUris } : {}),
    ...(client.backchannelLogoutUri ? { backchannel_logout_uri: client.backchannelLogoutUri } : {}),
    ...(client.tlsCertThumbprint ? { tls_client_certificate_thumbprint: client.tlsCertThumbprint } : {}),
    ...(client.allowedAddresses?.length ? { allowed_addresses: client.allowedAddresses } : {}),
    ...(client.idTokenAlg ? { id_token_signed_response_alg: client.idTokenAlg } : {}),
    ...(client.requirePar ? { require_pushed_authorization_requests: true } : {}),
    ...(client.dpopBoundAccessTokens ? { dpop_bound_access_tokens: true } : {}),
    ...(client.publicTokenExchange ? { public_token_exchange: true } : {}),
    ...(client.backchannelTokenDeliveryMode ? { backchannel_token_delivery_mode: client.backchannelTokenDeliveryMode } : {}),
    ...(client.backchannelNotificationEndpoint ? { backchannel_client_notification_endpoint: client.backchannelNotificationEndpoint } : {}),
    ...(client.resources?.length ? { resources: client.resources } : {}),
    ...(client.jwksUri ? { jwks_uri: client.jwksUri } : {}) };
  print(Boolean(values.json), out, `client_id: ${client.id}${secret ? `\nclient_secret: ${secret}\n(the secret is shown once; only its hash is stored)` : ''}`);
}

async function clientList(args: string[]): Promise<void> {
  const { values } = parse(args, parserOptions('client list'));
  const clients = await withStorage(configFrom(values), (s) => s.clients.list());
  print(Boolean(values.json), { clients: clients.map((c) => describeClient(c)) }, clients.map((c) => `${c.id}  ${c.name}  [${c.grantTypes.join(',')}]`).join('\n') || '(no clients)');
}

async function keysRotate(args: string[]): Promise<void> {
  const { values } = parse(args, parserOptions('keys rotate'));
  const config = configFrom(values);
  const key = await withStorage(config, async (s) => {
    const ring = new KeyRing(s.keys, systemClock);
    await ring.init();
    // Old keys stay published until every token they signed has expired.
    return ring.rotate(Date.now() + config.accessTokenTtl * 1000 + 60_000);
  });
  print(Boolean(values.json), { kid: key.kid, alg: key.alg }, `new signing key ${key.kid} (${key.alg}): running servers publish it within a second and sign with it from two seconds on; previous keys stay published until their tokens expire`);
}

async function botCreate(args: string[]): Promise<void> {
  const { values } = parse(args, parserOptions('bot create'));
  const { bot, token } = await withStorage(configFrom(values), async (s) => {
    const owner = await s.users.findByUsername(String(values.owner ?? '')) ?? await s.users.get(String(values.owner ?? ''));
    if (!owner) throw invalidRequest('--owner must name an existing user');
    try {
      return await createBot(s.bot, systemClock, { ownerUserId: owner.id, username: String(values.username ?? ''), name: String(values.name ?? '') });
    } catch (e) {
      if (e instanceof BotInputError || e instanceof BotUsernameTakenError) throw invalidRequest(e.message);
      throw e;
    }
  });
  print(Boolean(values.json), { id: bot.id, username: bot.username, token }, `created bot @${bot.username} (${bot.id})\ntoken: ${token}\n(the token is shown once; only its hash is stored)`);
}

export const DATABASE_COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  migrate,
  'user create': userCreate,
  'client create': clientCreate,
  'client list': clientList,
  'keys rotate': keysRotate,
  'bot create': botCreate,
  ...webhookCommands({ parse, configFrom, print, withStorage }),
  ...secretKeyCommands({ parse, configFrom, print }, readStdin),
  ...registrationCommands({ parse, configFrom, print, withStorage }),
  ...accessCommands({ parse, configFrom, print, withStorage }),
  ...userLockCommands({ parse, configFrom, print, withStorage }),
  ...userAccountCommands({ parse, configFrom, print, withStorage }, readStdin),
  ...userInviteCommands({ parse, configFrom, print, withStorage }),
};
