import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseSecretKey } from './core/secret-box.js';
import { loadProviders, type Provider } from './core/federation/providers.js';
import { readSettings, type MailTransportSetting, type MigrateMode, type Registration, type Role, type SignupSetting, type Source, type TokenVerification } from './settings.js';

/**
 * Settings: flags, then environment variables, then these defaults
 * (docs/deployment.md, Settings). Validated once at start; a bad value stops the process with
 * a message naming the setting.
 */
export interface Config {
  readonly databaseUrl: string;
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key, so deployments (or test runs) can share one Redis. */
  readonly redisPrefix: string;
  readonly host: string;
  readonly authPort: number;
  readonly apiPort: number;
  readonly botPort: number;
  readonly roles: ReadonlySet<Role>;
  /** Processes serving HTTP in one `serve` (GATEHOUSE_WORKERS; `auto` resolved to the core count). */
  readonly workers: number;
  readonly authUrl: string;
  readonly apiUrl: string;
  readonly botApiUrl: string;
  readonly allowPrivateWebhooks: boolean;
  /** Bearer credential for the admin HTTP API; the API is off without it. */
  readonly adminToken: string | undefined;
  readonly accessTokenTtl: number;
  readonly codeTtl: number;
  readonly refreshTokenTtl: number;
  readonly sessionTtl: number;
  /** Sudo mode: a sensitive change needs the password or a second factor from the last this many seconds (src/core/reauth.ts). */
  readonly reauthWindow: number;
  /** GET on the token endpoint (some older clients send it; credentials end up in logs, docs/security.md); off by default. */
  readonly tokenEndpointGet: boolean;
  /** `/oauth/token_key` open to everyone (it always is at /.well-known/jwks.json). */
  readonly openTokenKey: boolean;
  /** Lifetime of a pushed authorization request's `request_uri`, seconds (RFC 9126 §2.2; at most 600). */
  readonly parTtl: number;
  /** RFC 8628 §3.2 `interval` of device and CIBA requests, seconds. */
  readonly pollInterval: number;
  /** Every client must push its authorization requests (RFC 9126 §5 `require_pushed_authorization_requests`). */
  readonly parRequired: boolean;
  /** Dynamic client registration (RFC 7591): off, token (an initial access token required) or open. */
  readonly registration: Registration;
  /** Sign-up at /signup (src/core/account/signup.ts): off, invite (an invitation link required) or open. */
  readonly signup: SignupSetting;
  /** Trust X-Forwarded-* from this proxy setting (fastify `trustProxy`). */
  readonly trustProxy: boolean | string;
  readonly logLevel: string;
  /** `json` or `text` when asked for; undefined: `text` on a terminal, `json` otherwise (src/cli/log-output.ts). */
  readonly logFormat: 'json' | 'text' | undefined;
  /** Port of the Prometheus `/metrics` listener; undefined: no metrics. */
  readonly metricsPort: number | undefined;
  /**
   * How the resource server checks access tokens (docs/oauth.md, Resource server): `table` looks
   * every token up in the shared storage (sees revocation), `local` verifies
   * JWTs against the issuer's JWKS without a lookup (fastest; revocation of a
   * JWT is not seen before it expires), `introspection` asks the
   * authorization server over HTTP (RFC 7662) as a client.
   */
  readonly tokenVerification: TokenVerification;
  /** Seconds a token check is remembered by `table` and `introspection` (0: none); revocation shows within it. */
  readonly introspectionCacheTtl: number;
  /** Credentials of a client created with `--introspect`, for `introspection`. */
  readonly introspectionClientId: string | undefined;
  readonly introspectionClientSecret: string | undefined;
  /** Bot API flood control (Telegram: ~1 message/s per chat with bursts, ~30/s per bot); rate 0 turns a limit off. */
  readonly botFlood: { readonly perChat: FloodLimit; readonly global: FloodLimit };
  /**
   * PEM certificate and key files: the authorization and resource servers then
   * serve HTTPS and ask for (never require) TLS client certificates (RFC 8705).
   */
  readonly tlsCert: string | undefined;
  readonly tlsKey: string | undefined;
  /**
   * Behind a TLS-terminating proxy: the request header in which it forwards the
   * client certificate. Honoured only on requests from a trusted proxy
   * (`trustProxy`); everyone else's copy of the header is ignored.
   */
  readonly clientCertHeader: string | undefined;
  /** Third-party login providers (GATEHOUSE_PROVIDERS_FILE, GATEHOUSE_PROVIDERS): src/core/federation/providers.ts. */
  readonly federationProviders: readonly Provider[];
  /** Bot token chat notifications are sent with (docs/events.md, Chat notifications); chat endpoints wait while it is unset. */
  readonly notifyBotToken: string | undefined;
  /** The Bot API they go through; unset means Gatehouse's own ({bot_api_url}). Any Telegram-compatible API works. */
  readonly notifyBotApiUrl: string | undefined;
  /** Seconds a webhook receiver (or the Bot API) gets to answer before the attempt counts as failed. */
  readonly webhookTimeout: number;
  /** Where e-mail goes (GATEHOUSE_SMTP_URL); undefined: nothing is e-mailed (src/core/mail). Holds the SMTP password: never log it. */
  readonly smtp: MailTransportSetting | undefined;
  /** The From of every e-mail (GATEHOUSE_MAIL_FROM; default `Gatehouse <no-reply@HOST>`, HOST that of the auth URL). */
  readonly mailFrom: string;
  /** Folder of the files bots send; undefined: `files` in the data folder (src/store/bot/files-disk.ts). */
  readonly filesDir: string | undefined;
  /** GATEHOUSE_BOT_FILE_QUOTA: the bytes one bot's files may add up to. */
  readonly botFileQuota: number;
  /** Base64 of the 32-byte key stored secrets are encrypted under (GATEHOUSE_SECRET_KEY, or read from GATEHOUSE_SECRET_KEY_FILE); unset: a key file in the data folder (src/store/secrets/key-file.ts). */
  readonly secretKey: string | undefined;
  /** GATEHOUSE_MIGRATE: `auto`, serve applies pending migrations; `off`, serve refuses to start while any is pending. */
  readonly migrate: MigrateMode;
}

export type { Role, TokenVerification } from './settings.js';

/** One flood-control bucket: messages per second (0: no limit) and burst. */
export interface FloodLimit {
  readonly rate: number;
  readonly burst: number;
}

/** Bad settings: the process does not start. Never an HTTP answer, so not a GatehouseError (docs/architecture.md, Errors). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Environment-variable names of each flag: `--auth-port` is GATEHOUSE_AUTH_PORT. */
export function flagsToEnv(flags: Record<string, string | boolean | undefined>): Source {
  const out: Source = {};
  for (const [k, v] of Object.entries(flags)) {
    if (v === undefined) continue;
    out[`GATEHOUSE_${k.toUpperCase().replace(/-/g, '_')}`] = String(v);
  }
  return out;
}

/** Freezes an object and everything reachable from it (a Set's members stay, the Set cannot grow). */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  if (value instanceof Set) {
    const set = value as Set<unknown>;
    const refuse = () => {
      throw new TypeError('settings are read-only');
    };
    Object.defineProperties(set, { add: { value: refuse }, delete: { value: refuse }, clear: { value: refuse } });
  }
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
  return value;
}

/**
 * GATEHOUSE_SECRET_KEY, or the key read from GATEHOUSE_SECRET_KEY_FILE (a
 * mounted secret keeps it out of the environment, which `ps e` and crash
 * reports show). Both set is refused: which one wins would be a guess.
 */
function secretKeyOf(value: string | undefined, file: string | undefined): string | undefined {
  if (file === undefined) return value;
  if (value !== undefined) throw new ConfigError('GATEHOUSE_SECRET_KEY and GATEHOUSE_SECRET_KEY_FILE: set one of them, not both');
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new ConfigError(`GATEHOUSE_SECRET_KEY_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    parseSecretKey(raw, `GATEHOUSE_SECRET_KEY_FILE (${file})`);
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
  return raw;
}

const hostForUrl = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host);

/**
 * The settings (src/settings.ts) from flags, then the environment, then
 * defaults; checked together, and frozen: nothing changes them once built.
 */
export function loadConfig(env: Source = process.env, flags: Source = {}): Config {
  const src: Source = { ...env, ...flags };
  const read = readSettings(src);
  if ('error' in read) throw new ConfigError(read.error);
  const v = read.values;
  const tlsCert = v.GATEHOUSE_TLS_CERT;
  const tlsKey = v.GATEHOUSE_TLS_KEY;
  if (Boolean(tlsCert) !== Boolean(tlsKey)) throw new ConfigError('GATEHOUSE_TLS_CERT and GATEHOUSE_TLS_KEY go together: set both or neither');
  const clientCertHeader = v.GATEHOUSE_CLIENT_CERT_HEADER;
  if (clientCertHeader && v.GATEHOUSE_TRUST_PROXY === false) {
    throw new ConfigError('GATEHOUSE_CLIENT_CERT_HEADER needs GATEHOUSE_TRUST_PROXY: the header is believed only from a trusted proxy');
  }
  const tokenVerification = v.GATEHOUSE_TOKEN_VERIFICATION;
  if (tokenVerification === 'introspection' && (!v.GATEHOUSE_INTROSPECTION_CLIENT_ID || !v.GATEHOUSE_INTROSPECTION_CLIENT_SECRET)) {
    throw new ConfigError('GATEHOUSE_TOKEN_VERIFICATION=introspection needs GATEHOUSE_INTROSPECTION_CLIENT_ID and GATEHOUSE_INTROSPECTION_CLIENT_SECRET');
  }
  const host = v.GATEHOUSE_HOST;
  const scheme = tlsCert ? 'https' : 'http';
  // With port 0 the real URL is known only once the listener is bound (withListeners below).
  const base = (s: string, port: number) => `${s}://${hostForUrl(host)}:${port}`;
  return deepFreeze<Config>({
    databaseUrl: v.GATEHOUSE_DATABASE_URL,
    redisUrl: v.GATEHOUSE_REDIS_URL,
    redisPrefix: v.GATEHOUSE_REDIS_PREFIX,
    host,
    authPort: v.GATEHOUSE_AUTH_PORT,
    apiPort: v.GATEHOUSE_API_PORT,
    botPort: v.GATEHOUSE_BOT_PORT,
    roles: v.GATEHOUSE_ROLES,
    workers: v.GATEHOUSE_WORKERS === 'auto' ? availableParallelism() : v.GATEHOUSE_WORKERS,
    authUrl: v.GATEHOUSE_AUTH_URL ?? base(scheme, v.GATEHOUSE_AUTH_PORT),
    apiUrl: v.GATEHOUSE_API_URL ?? base(scheme, v.GATEHOUSE_API_PORT),
    botApiUrl: v.GATEHOUSE_BOT_API_URL ?? base('http', v.GATEHOUSE_BOT_PORT),
    allowPrivateWebhooks: v.GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS,
    adminToken: v.GATEHOUSE_ADMIN_TOKEN,
    accessTokenTtl: v.GATEHOUSE_ACCESS_TOKEN_TTL,
    codeTtl: v.GATEHOUSE_CODE_TTL,
    refreshTokenTtl: v.GATEHOUSE_REFRESH_TOKEN_TTL,
    sessionTtl: v.GATEHOUSE_SESSION_TTL,
    reauthWindow: v.GATEHOUSE_REAUTH_WINDOW,
    tokenEndpointGet: v.GATEHOUSE_TOKEN_ENDPOINT_GET,
    openTokenKey: v.GATEHOUSE_OPEN_TOKEN_KEY,
    parTtl: v.GATEHOUSE_PAR_TTL,
    pollInterval: v.GATEHOUSE_POLL_INTERVAL,
    parRequired: v.GATEHOUSE_PAR_REQUIRED,
    registration: v.GATEHOUSE_REGISTRATION,
    signup: v.GATEHOUSE_SIGNUP,
    trustProxy: v.GATEHOUSE_TRUST_PROXY,
    logLevel: v.GATEHOUSE_LOG_LEVEL,
    logFormat: v.GATEHOUSE_LOG_FORMAT,
    metricsPort: v.GATEHOUSE_METRICS_PORT,
    tokenVerification,
    introspectionCacheTtl: v.GATEHOUSE_INTROSPECTION_CACHE_TTL,
    introspectionClientId: v.GATEHOUSE_INTROSPECTION_CLIENT_ID,
    introspectionClientSecret: v.GATEHOUSE_INTROSPECTION_CLIENT_SECRET,
    botFlood: {
      perChat: { rate: v.GATEHOUSE_BOT_FLOOD_CHAT_RATE, burst: v.GATEHOUSE_BOT_FLOOD_CHAT_BURST },
      global: { rate: v.GATEHOUSE_BOT_FLOOD_GLOBAL_RATE, burst: v.GATEHOUSE_BOT_FLOOD_GLOBAL_BURST },
    },
    tlsCert,
    tlsKey,
    clientCertHeader,
    // The provider list may name further variables (GATEHOUSE_PROVIDER_<ID>_CLIENT_SECRET), so it reads the whole source.
    federationProviders: loadProviders(src, (message) => new ConfigError(message)),
    notifyBotToken: v.GATEHOUSE_NOTIFY_BOT_TOKEN,
    notifyBotApiUrl: v.GATEHOUSE_NOTIFY_BOT_API_URL,
    webhookTimeout: v.GATEHOUSE_WEBHOOK_TIMEOUT,
    smtp: v.GATEHOUSE_SMTP_URL,
    mailFrom: v.GATEHOUSE_MAIL_FROM ?? `Gatehouse <no-reply@${new URL(v.GATEHOUSE_AUTH_URL ?? base(scheme, v.GATEHOUSE_AUTH_PORT)).hostname}>`,
    filesDir: v.GATEHOUSE_FILES_DIR,
    botFileQuota: v.GATEHOUSE_BOT_FILE_QUOTA,
    secretKey: secretKeyOf(v.GATEHOUSE_SECRET_KEY, v.GATEHOUSE_SECRET_KEY_FILE),
    migrate: v.GATEHOUSE_MIGRATE,
  });
}

/** With port 0 a URL is known only once its listener is bound; an explicit URL setting (any other port) wins. */
function boundUrl(configured: string, port: number | undefined): string {
  const u = new URL(configured);
  if (port === undefined || u.port !== '0') return configured;
  u.port = String(port);
  return u.toString().replace(/\/+$/, '');
}

/**
 * A new (frozen) config whose public URLs name the ports the listeners were
 * bound to: what port 0 picked is known before any service is built.
 */
export function withListeners(config: Config, ports: { auth?: number; api?: number; bot?: number }): Config {
  return deepFreeze<Config>({
    ...config,
    authUrl: boundUrl(config.authUrl, ports.auth),
    apiUrl: boundUrl(config.apiUrl, ports.api),
    botApiUrl: boundUrl(config.botApiUrl, ports.bot),
  });
}
