import { loadProviders, type Provider } from './core/federation/providers.js';

/**
 * Settings: flags, then environment variables, then these defaults
 * (INTERFACE.md). Validated once at start; a bad value stops the process with
 * a message naming the setting.
 */
export interface Config {
  databaseUrl: string;
  redisUrl: string | undefined;
  /** Prefix of every Redis key, so deployments (or test runs) can share one Redis. */
  redisPrefix: string;
  host: string;
  authPort: number;
  apiPort: number;
  botPort: number;
  roles: Set<Role>;
  authUrl: string;
  apiUrl: string;
  botApiUrl: string;
  allowPrivateWebhooks: boolean;
  /** Bearer credential for the admin HTTP API; the API is off without it. */
  adminToken: string | undefined;
  accessTokenTtl: number;
  codeTtl: number;
  refreshTokenTtl: number;
  sessionTtl: number;
  /** GET on the token endpoint (one implementation of the seed accepts it); off by default. */
  tokenEndpointGet: boolean;
  /** `/oauth/token_key` open to everyone (it always is at /.well-known/jwks.json). */
  openTokenKey: boolean;
  /** Trust X-Forwarded-* from this proxy setting (fastify `trustProxy`). */
  trustProxy: boolean | string;
  logLevel: string;
  /**
   * How the resource server checks access tokens (spec §5.5): `table` looks
   * every token up in the shared storage (sees revocation), `local` verifies
   * JWTs against the issuer's JWKS without a lookup (fastest; revocation of a
   * JWT is not seen before it expires), `introspection` asks the
   * authorization server over HTTP (RFC 7662) as a client.
   */
  tokenVerification: TokenVerification;
  /** Seconds a token check is remembered by `table` and `introspection` (0: none); revocation shows within it. */
  introspectionCacheTtl: number;
  /** Credentials of a client created with `--introspect`, for `introspection`. */
  introspectionClientId: string | undefined;
  introspectionClientSecret: string | undefined;
  /** Bot API flood control (Telegram: ~1 message/s per chat with bursts, ~30/s per bot); rate 0 turns a limit off. */
  botFlood: { perChat: { rate: number; burst: number }; global: { rate: number; burst: number } };
  /**
   * PEM certificate and key files: the authorization and resource servers then
   * serve HTTPS and ask for (never require) TLS client certificates (RFC 8705).
   */
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  /**
   * Behind a TLS-terminating proxy: the request header in which it forwards the
   * client certificate. Honoured only on requests from a trusted proxy
   * (`trustProxy`); everyone else's copy of the header is ignored.
   */
  clientCertHeader: string | undefined;
  /** Third-party login providers (GATEHOUSE_PROVIDERS_FILE, GATEHOUSE_PROVIDERS): src/core/federation/providers.ts. */
  federationProviders: Provider[];
  /** Bot token chat notifications are sent with (spec §1.6); chat endpoints wait while it is unset. */
  notifyBotToken: string | undefined;
  /** The Bot API they go through; unset means Gatehouse's own ({bot_api_url}). Any Telegram-compatible API works. */
  notifyBotApiUrl: string | undefined;
  /** Seconds a webhook receiver (or the Bot API) gets to answer before the attempt counts as failed. */
  webhookTimeout: number;
}

export type TokenVerification = 'table' | 'local' | 'introspection';
const TOKEN_VERIFICATIONS: readonly TokenVerification[] = ['table', 'local', 'introspection'];

export type Role = 'auth' | 'api' | 'bot' | 'worker';
const ROLES: readonly Role[] = ['auth', 'api', 'bot', 'worker'];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Source = Record<string, string | undefined>;

function int(src: Source, name: string, def: number, min = 0, max = 2 ** 31): number {
  const raw = src[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

function bool(src: Source, name: string, def: boolean): boolean {
  const raw = src[name]?.toLowerCase();
  if (raw === undefined || raw === '') return def;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${src[name]}"`);
}

function url(src: Source, name: string, def: string): string {
  const raw = src[name] || def;
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
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

export function loadConfig(env: Source = process.env, flags: Source = {}): Config {
  const src: Source = { ...env, ...flags };
  const host = src.GATEHOUSE_HOST || '127.0.0.1';
  const authPort = int(src, 'GATEHOUSE_AUTH_PORT', 8080, 0, 65535);
  const apiPort = int(src, 'GATEHOUSE_API_PORT', 8081, 0, 65535);
  const botPort = int(src, 'GATEHOUSE_BOT_PORT', 8082, 0, 65535);
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const roles = new Set((src.GATEHOUSE_ROLES || 'auth,api,bot,worker').split(',').map((r) => r.trim()).filter(Boolean));
  for (const r of roles) if (!ROLES.includes(r as Role)) throw new ConfigError(`GATEHOUSE_ROLES: unknown role "${r}" (use ${ROLES.join(',')})`);
  const databaseUrl = src.GATEHOUSE_DATABASE_URL || 'sqlite:./data/gatehouse.db';
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(databaseUrl)) throw new ConfigError('GATEHOUSE_DATABASE_URL must be sqlite:PATH, sqlite::memory: or postgres://…');
  const trust = src.GATEHOUSE_TRUST_PROXY;
  const scheme = src.GATEHOUSE_TLS_CERT ? 'https' : 'http';
  return {
    databaseUrl,
    redisUrl: src.GATEHOUSE_REDIS_URL || undefined,
    redisPrefix: src.GATEHOUSE_REDIS_PREFIX || 'gh:',
    host,
    authPort,
    apiPort,
    botPort,
    roles: roles as Set<Role>,
    // With port 0 the real URL is known only after listening; the server fills it in then.
    authUrl: url(src, 'GATEHOUSE_AUTH_URL', `${scheme}://${urlHost}:${authPort}`),
    apiUrl: url(src, 'GATEHOUSE_API_URL', `${scheme}://${urlHost}:${apiPort}`),
    botApiUrl: url(src, 'GATEHOUSE_BOT_API_URL', `http://${urlHost}:${botPort}`),
    allowPrivateWebhooks: bool(src, 'GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS', false),
    adminToken: src.GATEHOUSE_ADMIN_TOKEN || undefined,
    accessTokenTtl: int(src, 'GATEHOUSE_ACCESS_TOKEN_TTL', 3600, 1),
    codeTtl: int(src, 'GATEHOUSE_CODE_TTL', 60, 1, 600),
    refreshTokenTtl: int(src, 'GATEHOUSE_REFRESH_TOKEN_TTL', 30 * 24 * 3600, 1),
    sessionTtl: int(src, 'GATEHOUSE_SESSION_TTL', 12 * 3600, 60),
    tokenEndpointGet: bool(src, 'GATEHOUSE_TOKEN_ENDPOINT_GET', false),
    openTokenKey: bool(src, 'GATEHOUSE_OPEN_TOKEN_KEY', false),
    trustProxy: trust === undefined || trust === '' ? false : ['true', 'false'].includes(trust) ? trust === 'true' : trust,
    logLevel: src.GATEHOUSE_LOG_LEVEL || 'info',
    ...resourceSettings(src),
    botFlood: botFloodSettings(src),
    ...tlsSettings(src),
    federationProviders: loadProviders(src, (message) => new ConfigError(message)),
    ...notifySettings(src),
  };
}

function notifySettings(src: Source) {
  return {
    notifyBotToken: src.GATEHOUSE_NOTIFY_BOT_TOKEN || undefined,
    notifyBotApiUrl: src.GATEHOUSE_NOTIFY_BOT_API_URL ? url(src, 'GATEHOUSE_NOTIFY_BOT_API_URL', '') : undefined,
    webhookTimeout: int(src, 'GATEHOUSE_WEBHOOK_TIMEOUT', 15, 1, 300),
  };
}

/** GATEHOUSE_TLS_CERT / GATEHOUSE_TLS_KEY (file paths, both or neither) and GATEHOUSE_CLIENT_CERT_HEADER. */
function tlsSettings(src: Source) {
  const tlsCert = src.GATEHOUSE_TLS_CERT || undefined;
  const tlsKey = src.GATEHOUSE_TLS_KEY || undefined;
  if (Boolean(tlsCert) !== Boolean(tlsKey)) throw new ConfigError('GATEHOUSE_TLS_CERT and GATEHOUSE_TLS_KEY go together: set both or neither');
  const header = src.GATEHOUSE_CLIENT_CERT_HEADER?.trim().toLowerCase() || undefined;
  if (header && !/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(header)) throw new ConfigError(`GATEHOUSE_CLIENT_CERT_HEADER must be a header name, got "${header}"`);
  const trust = src.GATEHOUSE_TRUST_PROXY;
  if (header && (!trust || trust === 'false')) {
    throw new ConfigError('GATEHOUSE_CLIENT_CERT_HEADER needs GATEHOUSE_TRUST_PROXY: the header is believed only from a trusted proxy');
  }
  return { tlsCert, tlsKey, clientCertHeader: header };
}

function resourceSettings(src: Source) {
  const tokenVerification = (src.GATEHOUSE_TOKEN_VERIFICATION || 'table') as TokenVerification;
  if (!TOKEN_VERIFICATIONS.includes(tokenVerification)) {
    throw new ConfigError(`GATEHOUSE_TOKEN_VERIFICATION must be one of ${TOKEN_VERIFICATIONS.join(', ')}, got "${tokenVerification}"`);
  }
  const introspectionClientId = src.GATEHOUSE_INTROSPECTION_CLIENT_ID || undefined;
  const introspectionClientSecret = src.GATEHOUSE_INTROSPECTION_CLIENT_SECRET || undefined;
  if (tokenVerification === 'introspection' && (!introspectionClientId || !introspectionClientSecret)) {
    throw new ConfigError('GATEHOUSE_TOKEN_VERIFICATION=introspection needs GATEHOUSE_INTROSPECTION_CLIENT_ID and GATEHOUSE_INTROSPECTION_CLIENT_SECRET');
  }
  return {
    tokenVerification,
    introspectionCacheTtl: int(src, 'GATEHOUSE_INTROSPECTION_CACHE_TTL', 5, 0, 3600),
    introspectionClientId,
    introspectionClientSecret,
  };
}

function rate(src: Source, name: string, def: number): number {
  const raw = src[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1e6) throw new ConfigError(`${name} must be a number from 0 to 1000000, got "${raw}"`);
  return n;
}

function botFloodSettings(src: Source): Config['botFlood'] {
  return {
    perChat: { rate: rate(src, 'GATEHOUSE_BOT_FLOOD_CHAT_RATE', 1), burst: int(src, 'GATEHOUSE_BOT_FLOOD_CHAT_BURST', 20, 1, 1_000_000) },
    global: { rate: rate(src, 'GATEHOUSE_BOT_FLOOD_GLOBAL_RATE', 30), burst: int(src, 'GATEHOUSE_BOT_FLOOD_GLOBAL_BURST', 30, 1, 1_000_000) },
  };
}
