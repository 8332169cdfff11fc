import { randomUUID } from 'node:crypto';
import type { Config } from './config.js';
import { BOT_TOKEN_POLICY, BotApi } from './core/bot/api.js';
import { BotFather } from './core/bot/botfather.js';
import { CallbackQueries } from './core/bot/callbacks.js';
import { Conversations } from './core/bot/conversations.js';
import { BotFiles } from './core/bot/files.js';
import { FloodControl, type FloodGate } from './core/bot/flood.js';
import { ensureBotFather } from './core/bot/manage.js';
import { botMethods } from './core/bot/methods.js';
import { ChatClient } from './core/bot/people.js';
import { NotifyBotIdentity } from './core/bot/notify-bot.js';
import { LocalWakeups, type Wakeups } from './core/bot/wakeups.js';
import { BotWebhookDeliverer, type DeliveryLease } from './core/bot/bot-webhooks.js';
import { defaultLoginPolicy, LoginGuard } from './core/login.js';
import { AuthorizationEndpoint } from './core/oauth/authorize.js';
import { defaultOAuthConfig, type OAuthConfig } from './core/oauth/config.js';
import { TokenInspector } from './core/oauth/inspect.js';
import { KeyRing, signOffload } from './core/oauth/keys.js';
import { TokenEndpoint } from './core/oauth/token-endpoint.js';
import { PushedAuthorization } from './core/oauth/par.js';
import { RequestObjects } from './core/oauth/request-object.js';
import { ClientAssertions } from './core/oauth/client-assertion.js';
import { DynamicRegistration } from './core/oauth/registration.js';
import { tokenExchangeGrant } from './core/oauth/grants/token-exchange.js';
import { DpopVerifier } from './core/oauth/dpop.js';
import { clientAssertionAudiences } from './core/oauth/client-options.js';
import { TokenIssuer } from './core/oauth/tokens.js';
import { systemClock, type Clock, type PasswordHasher, type Storage } from './core/ports.js';
import { SessionManager } from './core/sessions.js';
import { ADMIN_TOKEN_POLICY, CLIENT_SECRET_POLICY, CredentialThrottle } from './core/throttle.js';
import { IdTokenIssuer } from './core/oidc/id-token.js';
import { outboundLogoutSender } from './core/oidc/backchannel.js';
import { SingleSignOn } from './core/oidc/sso.js';
import { botWebhookChecker, botWebhookPoster } from './http/bot/bot-webhook-client.js';
import { Federation } from './core/federation/index.js';
import { CachedVerifier, TokenRouter } from './core/resource/cache.js';
import { IntrospectionVerifier } from './core/resource/introspection.js';
import { RemoteJwks } from './core/resource/jwks.js';
import { JwtVerifier } from './core/resource/jwt.js';
import { TableVerifier } from './core/resource/table.js';
import type { AccessTokenVerifier } from './core/resource/token.js';
import { argon2Hasher } from './infra/argon2.js';
import type { BotStorage } from './core/bot/ports.js';
import type { FederationStorage } from './core/federation/ports.js';
import { ChatActions, NotifyBotApi } from './core/notify/actions.js';
import { ChatLinkCodes } from './core/notify/link-code.js';
import { LinkTargets } from './core/notify/link-target.js';
import { notifyTransport } from './core/notify/transport.js';
import { createMfa, type Mfa } from './core/mfa/index.js';
import { Reauthentication } from './core/reauth.js';
import type { DeviceFlow } from './core/oauth/device.js';
import type { Ciba } from './core/oauth/ciba.js';
import { createBackchannel } from './core/oauth/device-wiring.js';
import { registerOneTapActions } from './core/notify/one-tap.js';
import { createAccess, type Access } from './core/access/index.js';
import { AccessClaims } from './core/access/claims.js';
import { DiskBlobStore } from './store/bot/files-disk.js';
import type { SqlStorage } from './store/index.js';
import type { Redis } from 'ioredis';
import type { ConsoleStore } from './core/console/ports.js';
import { outboundClients, type OutboundClient } from './infra/outbound/client.js';
import { Mailer } from './core/mail/mailer.js';
import { Signup } from './core/account/signup.js';
import { ProofOfWork } from './core/account/proof-of-work.js';
import { UserAccounts } from './core/account/user-accounts.js';
import { PasswordRecovery, RESET_POLICY } from './core/account/recovery.js';
import { unlockAccount } from './core/account-lock.js';
import type { UserAccountStore, UserAccountTransactions } from './core/account/user-accounts-ports.js';
import { openStorageWhenReachable, type StoreLog } from './store/startup.js';

/** Everything one Gatehouse process runs on, wired once (the composition root). */
export interface Gatehouse {
  /** Read-only, like everything in it (src/config.ts). */
  readonly config: Config;
  readonly oauth: OAuthConfig;
  clock: Clock;
  storage: Storage;
  /** The chat-bot interface's stores (same database, outbox and transaction port). */
  botStorage: BotStorage;
  /** Third-party login's stores, likewise. */
  federationStorage: FederationStorage;
  hasher: PasswordHasher;
  keys: KeyRing;
  tokenIssuer: TokenIssuer;
  tokenEndpoint: TokenEndpoint;
  authorization: AuthorizationEndpoint;
  inspector: TokenInspector;
  sessions: SessionManager;
  login: LoginGuard;
  /** Wrong client secrets and admin tokens, per credential and per address (src/core/throttle.ts). */
  clientThrottle: CredentialThrottle;
  adminThrottle: CredentialThrottle;
  /** OpenID Connect ID tokens (src/core/oidc). */
  idTokens: IdTokenIssuer;
  /** Single sign-on sessions and single logout (src/core/oidc/sso.ts). */
  sso: SingleSignOn;
  /** Server-side HTTP, by who chose the destination (src/infra/outbound/client.ts). */
  outbound: { registered: OutboundClient; configured: OutboundClient };
  /** Third-party login (src/core/federation); undefined when no provider is configured. */
  federation: Federation | undefined;
  /** Administrators and the accounts they locked (the admin console, src/core/console). */
  console: ConsoleStore;
  /** Pushed authorization requests (RFC 9126, src/core/oauth/par.ts). */
  par: PushedAuthorization;
  /** `private_key_jwt` client authentication (RFC 7523, src/core/oauth/client-assertion.ts). */
  clientAssertions: ClientAssertions;
  /** Dynamic client registration and management (RFC 7591, RFC 7592, src/core/oauth/registration.ts). */
  registration: DynamicRegistration;
  /** DPoP proofs (RFC 9449, src/core/oauth/dpop.ts), at the token endpoint and {api_url}. */
  dpop: DpopVerifier;
  /** The notification bot's buttons, by callback_data prefix (src/core/notify/actions.ts). */
  chatActions: ChatActions;
  /** Linking a chat: one-time codes made at /account/security, and who may confirm a `/start` link (src/core/notify/link-code.ts, link-target.ts). */
  chatLinkCodes: ChatLinkCodes;
  linkTargets: LinkTargets;
  /** Second factors, the second step of sign-in and approval in chat (src/core/mfa). */
  mfa: Mfa;
  /** Sudo mode: sensitive changes need a recent password or second factor (src/core/reauth.ts). */
  reauth: Reauthentication;
  /** Groups, roles, their claims and elevations approved in chat (src/core/access). */
  access: Access;
  /** Device authorization (RFC 8628, src/core/oauth/device.ts). */
  device: DeviceFlow;
  /** OpenID Connect CIBA (src/core/oauth/ciba.ts). */
  ciba: Ciba;
  /** E-mail (src/core/mail): `mailer.enqueue(tx, …)` in the transaction of the change; `mailer.enabled` says whether anything is sent. */
  mailer: Mailer;
  /** Sign-up and invitations (GATEHOUSE_SIGNUP, src/core/account/signup.ts). */
  signup: Signup;
  /** ALTCHA proof of work on sign-up and after failed sign-ins (src/core/account/proof-of-work.ts). */
  proofOfWork: ProofOfWork;
  /** A person's account over its life: new password, administrators' changes, deletion (src/core/account/user-accounts.ts). */
  userAccounts: UserAccounts;
  /** Their stores in one transaction (Redis sessions when configured): `gh.accountTransactions.transaction((tx) => gh.userAccounts.setPassword(tx, …))`. */
  accountTransactions: UserAccountTransactions;
  /** Operators' list of accounts and password resets (src/core/account/user-accounts-ports.ts). */
  userAccountStore: UserAccountStore;
  /** "Forgot password?": by the linked chat or an e-mailed link (src/core/account/recovery.ts). */
  recovery: PasswordRecovery;
  close(): Promise<void>;
}

export interface GatehouseOptions {
  clock?: Clock;
  hasher?: PasswordHasher;
  storage?: SqlStorage;
  /** Where storage outages are reported (start-up waiting, lost connections). */
  logger?: StoreLog;
}

const silent: StoreLog = { info: () => undefined, warn: () => undefined };

export async function createGatehouse(config: Config, opts: GatehouseOptions = {}): Promise<Gatehouse> {
  const clock = opts.clock ?? systemClock;
  const log = opts.logger ?? silent;
  const sql = opts.storage ?? (await openStorageWhenReachable(config.databaseUrl, log, { secretKey: config.secretKey, migrations: config.migrate }));
  let storage: Storage = sql;
  // With Redis, sessions and rate limits are shared by every process behind one address.
  if (config.redisUrl) {
    // Loaded only with Redis configured (ioredis is a large package most deployments never use).
    const { connectRedis, redisConnected, withRedis } = await import('./store/redis/index.js');
    const redis = connectRedis(config.redisUrl, log);
    // A Redis that is down at start degrades the service; it does not stop it.
    await redisConnected(redis);
    storage = withRedis(sql, redis, { prefix: config.redisPrefix });
  }
  const hasher = opts.hasher ?? argon2Hasher();
  // Read-only like the config it comes from: the URLs are final (port 0 resolved) before this runs.
  const oauth: OAuthConfig = Object.freeze({
    ...defaultOAuthConfig(config.authUrl, config.apiUrl),
    accessTokenTtl: config.accessTokenTtl,
    codeTtl: config.codeTtl,
    refreshTokenTtl: config.refreshTokenTtl,
  });
  // Tokens are signed on libuv's thread pool while a core has no worker of its own to run; with one
  // worker per core the pool's threads would only take CPU from the workers (src/core/oauth/keys.ts).
  const keys = new KeyRing(storage.keys, clock, { offload: signOffload(config.workers) });
  await keys.init();
  // Rotations made elsewhere (other processes, the command line) are published here within a second (src/core/oauth/keys.ts).
  keys.watch();
  // Scopes `groups` and `roles` (src/core/access/claims.ts) in JWT access tokens and ID tokens.
  const accessClaims = new AccessClaims(sql.access, clock);
  const tokenIssuer = new TokenIssuer(oauth, keys, clock, accessClaims);
  const consoleStore = sql.console;
  const outbound = outboundClients(config);
  const chatActions = new ChatActions();
  // The notification bot's Bot API is the operator's choice (GATEHOUSE_NOTIFY_BOT_API_URL).
  const notifyBot = config.notifyBotToken
    ? new NotifyBotApi(notifyTransport(outbound.configured.request), { apiUrl: config.notifyBotApiUrl ?? config.botApiUrl, token: config.notifyBotToken })
    : undefined;
  // Which of this server's bots is the notification bot, if any (its chat is the chat page's alone).
  const notifyIdentity = new NotifyBotIdentity({ bots: sql.bot.bots, clock }, config.notifyBotToken);
  const mfa = createMfa({
    store: sql.mfa, users: storage.users, hasher, clock, events: storage.events, limits: storage.rateLimits, issuerName: 'Gatehouse', authUrl: () => oauth.issuer,
    bot: notifyBot, actions: chatActions, locks: consoleStore, log,
    // With Redis, the lock after "Not me" ends the sessions where they live (src/core/account-lock.ts).
    approvals: storage === sql ? sql.approvals : { transaction: (fn) => sql.approvals.transaction((tx) => fn({ ...tx, sessions: storage.sessions })) },
  });
  const login = new LoginGuard(storage.users, storage.rateLimits, hasher, clock, storage.events, defaultLoginPolicy, consoleStore, (id) => mfa.factors.required(id));
  const idTokens = new IdTokenIssuer(oauth, keys, clock, accessClaims);
  const clientThrottle = new CredentialThrottle(storage.rateLimits, clock, CLIENT_SECRET_POLICY);
  // jwks_uri is registered by clients: fetched with the registered destinations' SSRF rules.
  const clientAssertions = new ClientAssertions({ replay: sql.currentOAuth.replay, clock, http: outbound.registered.request, audiences: () => clientAssertionAudiences(oauth.issuer) });
  // RFC 9449: proofs' jtis go to the same replay table as client assertions' (one across processes).
  const dpop = new DpopVerifier({ replay: sql.currentOAuth.replay, clock });
  const tokenEndpoint = new TokenEndpoint({ storage, config: oauth, clock, tokenIssuer, login, idTokens, clientThrottle, clientAssertions, dpop });
  const inspector = new TokenInspector({ stores: storage, keys, config: oauth, clock });
  // RFC 8693: subject and actor tokens are looked up as introspection does.
  tokenEndpoint.register(tokenExchangeGrant((t) => inspector.inspect(t)));
  const sessions = new SessionManager(storage.sessions, clock, config.sessionTtl * 1000);
  // RFC 9101 request objects, signed with the keys private_key_jwt uses (src/core/oauth/request-object.ts).
  const requestObjects = new RequestObjects({ keys: (c, h) => clientAssertions.key(c, h), issuer: oauth.issuer, clock });
  const authorization = new AuthorizationEndpoint({ storage, config: oauth, clock, tokenIssuer, requestObjects });
  const par = new PushedAuthorization({
    store: sql.currentOAuth.pushed, clients: storage.clients, clock, ttlSeconds: config.parTtl, required: config.parRequired, validate: (p) => authorization.validate(p),
    requestObject: (c, p) => requestObjects.resolve(c, p, { pushed: true }),
  });
  // Back-channel logout URIs are registered by clients (RFC 7591 lets anyone register one).
  const sso = new SingleSignOn({ storage, sessions, keys, config: oauth, clock, send: outboundLogoutSender(outbound.registered.request) });
  // The buttons of the alerts in a person's linked chat, and its /sessions and /apps (src/core/notify/one-tap.ts).
  registerOneTapActions(chatActions, {
    storage, clock, revokeSession: (userId, sid) => sso.revokeSession(userId, sid),
  });
  const { device, ciba } = createBackchannel({
    store: sql.currentOAuth.backchannel, storage, clock, issuer: () => oauth.issuer, interval: config.pollInterval, bot: notifyBot,
    decisions: sql.currentOAuth.decisions,
    http: outbound.registered.request, secrets: sql.secrets, isLocked: (id) => consoleStore.isLocked(id), tokenEndpoint, actions: chatActions, log,
  });
  // The same e-mail settings as gh.mailer (a Mailer holds nothing else).
  const userAccounts = new UserAccounts({
    hasher, mailer: new Mailer(config.smtp !== undefined, clock, { name: 'Gatehouse', url: oauth.issuer }), signedOut: (session) => sso.signOut(session),
  });
  const accountTransactions: UserAccountTransactions = storage === sql ? sql.userAccountTransactions
    : { transaction: (fn) => sql.userAccountTransactions.transaction((tx) => fn({ ...tx, sessions: storage.sessions })) };
  const recovery = new PasswordRecovery({
    store: sql.userAccounts, transactions: accountTransactions, accounts: userAccounts, users: storage.users, mailer: userAccounts.mailer, clock,
    throttle: new CredentialThrottle(storage.rateLimits, clock, RESET_POLICY), linkedChat: (id) => mfa.approval.linkedChat(id), bot: notifyBot,
    // In-process wake-ups of the waiting page; a tap handled by another process is seen by re-reading.
    wakeups: new LocalWakeups(), factors: mfa.factors, isLocked: (id) => consoleStore.isLocked(id),
    unlock: (id, ip) => unlockAccount(storage, id, { by: 'password_reset', ip }, clock.now()), authUrl: () => oauth.issuer, log,
  });
  recovery.register(chatActions);
  return {
    config,
    oauth,
    clock,
    storage,
    botStorage: sql.bot,
    federationStorage: sql.federation,
    hasher,
    keys,
    tokenIssuer,
    tokenEndpoint,
    authorization,
    inspector,
    sessions,
    login,
    clientThrottle,
    adminThrottle: new CredentialThrottle(storage.rateLimits, clock, ADMIN_TOKEN_POLICY),
    idTokens,
    sso,
    outbound,
    // Providers are the operator's choice: they may sit on a private network.
    federation: config.federationProviders.length === 0 ? undefined
      : new Federation(config.federationProviders, { storage: sql.federation, login, clock, http: outbound.configured.request }),
    par,
    console: consoleStore,
    clientAssertions,
    registration: new DynamicRegistration({
      storage: sql.registration, rateLimits: storage.rateLimits, clock, issuer: oauth.issuer, mode: config.registration, grantTypes: () => tokenEndpoint.grantTypes,
    }),
    dpop,
    chatActions,
    chatLinkCodes: new ChatLinkCodes({
      codes: sql.linkCodes, events: storage.events, users: storage.users, clock, notifyBot: notifyIdentity, botApiUrl: config.botApiUrl,
      ...(notifyBot ? { outside: { apiUrl: config.notifyBotApiUrl ?? config.botApiUrl, username: () => notifyBot.username() } } : {}),
    }),
    linkTargets: new LinkTargets({ notifyBot: notifyIdentity, people: sql.bot.people }),
    mfa,
    reauth: new Reauthentication({ sessions, factors: mfa.factors, clock, windowMs: config.reauthWindow * 1000 }),
    access: { ...createAccess({ store: sql.access, transactions: sql.accessTransactions, users: storage.users, events: storage.events, clock, bot: notifyBot, actions: chatActions, log }), claims: accessClaims },
    device,
    ciba,
    userAccounts,
    // With Redis, sessions are ended where they live (as the lock after "Not me" does).
    accountTransactions,
    userAccountStore: sql.userAccounts,
    recovery,
    mailer: new Mailer(config.smtp !== undefined, clock, { name: 'Gatehouse', url: oauth.issuer }),
    signup: new Signup({
      transactions: sql.signupTransactions, invitations: sql.invitations, users: storage.users, limits: storage.rateLimits, hasher, clock,
      mailer: new Mailer(config.smtp !== undefined, clock, { name: 'Gatehouse', url: oauth.issuer }),
      mode: config.signup, authUrl: () => oauth.issuer,
    }),
    // Solved challenges go to the replay table client assertions use (insert-once until expiry).
    proofOfWork: new ProofOfWork(sql.secrets.derive('altcha-hmac'), sql.currentOAuth.replay, clock),
    close: async () => {
      keys.close();
      outbound.registered.close();
      outbound.configured.close();
      await storage.close();
    },
  };
}

/** Verified JWTs are remembered this long: the same bytes verify the same way, only `exp` is rechecked. */
const JWT_CACHE_MS = 60_000;

/**
 * The token check of {api_url}, as `GATEHOUSE_TOKEN_VERIFICATION` says
 * (docs/oauth.md, Resource server). Opaque tokens can only be looked up, so `local` still sends
 * them to the token table, which this process shares anyway: it reads the
 * users table to answer `/user`.
 */
export function createResourceVerifier(gh: Gatehouse): AccessTokenVerifier {
  const { config, clock } = gh;
  const issuer = gh.oauth.issuer;
  const audience = [gh.oauth.audience];
  const ttlMs = config.introspectionCacheTtl * 1000;
  const table = new CachedVerifier(new TableVerifier(gh.inspector, { audience, clock }), { ttlMs, clock });
  switch (config.tokenVerification) {
    case 'table':
      return table;
    case 'local': {
      const keys = new RemoteJwks({ uri: `${config.authUrl}/.well-known/jwks.json`, http: gh.outbound.configured.request, clock });
      const jwt = new CachedVerifier(new JwtVerifier({ keys, issuer, audience, clock }), { ttlMs: JWT_CACHE_MS, clock, cacheFailures: false });
      return new TokenRouter({ jwt, opaque: table });
    }
    case 'introspection':
      return new CachedVerifier(new IntrospectionVerifier({
        endpoint: `${config.authUrl}/oauth/check_token`,
        clientId: config.introspectionClientId!,
        clientSecret: config.introspectionClientSecret!,
        issuer,
        audience,
        clock,
        http: gh.outbound.configured.request,
      }), { ttlMs, clock });
  }
}

/** The chat-bot interface's core: the Bot API, the people's chat client, and its background work. */
export interface BotInterface {
  api: BotApi;
  client: ChatClient;
  /** Files bots send: getFile downloads and the people's `/client/files`. */
  files: BotFiles;
  /** Starts webhook delivery and the purge of updates older than 24 hours. */
  start(): Promise<void>;
  /** Ends pending long polls at once (so closing the listener does not wait up to 50 s for them) and the background work. */
  stop(): void;
  /** After the listener closed: the wake-ups and their Redis connections. */
  close(): Promise<void>;
}

/** Unconfirmed updates are kept 24 hours (Bot API, getUpdates). */
const UPDATE_TTL_MS = 24 * 3600_000;
const PURGE_UPDATES_EVERY_MS = 10 * 60_000;

/**
 * What the workers of one `serve` (GATEHOUSE_WORKERS) share through their primary
 * (src/infra/cluster-child.ts): wake-ups and webhook leases when there is no
 * Redis, and flood control always.
 */
export interface ProcessLinks {
  wakeups?: Wakeups;
  lease?: DeliveryLease;
  flood?: FloodGate;
}

/** Wake-ups and the webhook lease through Redis, loaded only when Redis is configured. */
async function redisBotLinks(url: string, prefix: string, databaseUrl: string, log: StoreLog): Promise<{ redis: Redis; wakeups: Wakeups; lease: DeliveryLease }> {
  const [{ connectRedis }, { RedisWakeups, redisDeliveryLease }, { PgWakeupRelay }] = await Promise.all([
    import('./store/redis/index.js'), import('./store/bot/redis-wakeups.js'), import('./store/bot/pg-wakeups.js'),
  ]);
  const redis = connectRedis(url, log);
  // While Redis is away, wake-ups (and so the 409 rule) travel through PostgreSQL instead.
  const relay = /^postgres(ql)?:/.test(databaseUrl) ? new PgWakeupRelay(databaseUrl) : undefined;
  return { redis, wakeups: new RedisWakeups(redis, connectRedis(url), prefix, relay), lease: redisDeliveryLease(redis, prefix, randomUUID()) };
}

/** Wires the chat-bot interface (role `bot`) on `gh`: stores, wake-ups (Redis when configured), BotFather. */
export async function createBotInterface(gh: Gatehouse, log: StoreLog, links: ProcessLinks = {}): Promise<BotInterface> {
  const { config, clock } = gh;
  // With Redis, wake-ups reach the other processes too, and a lease per bot keeps
  // webhook delivery to one process at a time.
  const shared = config.redisUrl ? await redisBotLinks(config.redisUrl, `${config.redisPrefix}bot:`, config.databaseUrl, log) : undefined;
  const redis = shared?.redis;
  const wakeups = shared?.wakeups ?? links.wakeups ?? new LocalWakeups();
  const lease = shared?.lease ?? links.lease;
  const storage = gh.botStorage;
  const stopping = new AbortController();
  const conversations = new Conversations({ storage, users: gh.storage.users, wakeups, clock });
  const callbacks = new CallbackQueries({ storage, wakeups, clock });
  const blobs = await DiskBlobStore.forDeployment(config.filesDir, config.databaseUrl);
  const files = new BotFiles({ files: storage.files, blobs, people: storage.people, clock, http: gh.outbound.registered.request, quotaBytes: config.botFileQuota });
  const sweepFiles = () => files.sweep().catch((err) => log.warn({ err }, 'sweeping bot files failed'));
  const methods = botMethods({
    stores: storage, conversations, callbacks, files, wakeups, clock,
    allowPrivateWebhooks: config.allowPrivateWebhooks, checkWebhookUrl: botWebhookChecker(gh.outbound.registered.check),
  });
  const api = new BotApi({
    methods,
    bots: storage.bots,
    flood: links.flood ?? new FloodControl(config.botFlood),
    throttle: new CredentialThrottle(gh.storage.rateLimits, clock, BOT_TOKEN_POLICY),
    shutdown: stopping.signal,
  });
  const botFather = new BotFather({ account: await ensureBotFather(storage, gh.storage.users, clock), storage, clock, conversations });
  const notifyBot = new NotifyBotIdentity({ bots: storage.bots, clock }, config.notifyBotToken);
  const client = new ChatClient({ conversations, callbacks, bots: storage.bots, chats: storage.chats, profiles: storage.profiles, wakeups, botFather, shutdown: stopping.signal, notifyBot });
  const deliverer = new BotWebhookDeliverer(
    { bots: storage.bots, updates: storage.updates, wakeups, clock, callAs: (bot, method, params) => api.callAs(bot, method, params) },
    botWebhookPoster(gh.outbound.registered.request), undefined, (err) => log.warn({ err }, 'webhook delivery failed'), lease);
  let purge: NodeJS.Timeout | undefined;
  return {
    api,
    client,
    files,
    async start() {
      await deliverer.start();
      // Uploads a crash or a lost connection left in staging, and bytes no file row names any more (a deleted bot's).
      void sweepFiles();
      purge = setInterval(() => {
        void sweepFiles();
        storage.updates.purgeOlderThan(clock.now() - UPDATE_TTL_MS).catch((err) => log.warn({ err }, 'purging old bot updates failed'));
        storage.callbacks.purgeOlderThan(clock.now() - UPDATE_TTL_MS).catch((err) => log.warn({ err }, 'purging old callback queries failed'));
      }, PURGE_UPDATES_EVERY_MS);
      purge.unref();
    },
    stop() {
      clearInterval(purge);
      stopping.abort();
      deliverer.stop();
    },
    async close() {
      await blobs.close();
      await wakeups.close();
      redis?.disconnect();
    },
  };
}
