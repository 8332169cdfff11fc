import type { Config } from './config.js';
import { LoginGuard } from './core/login.js';
import { AuthorizationEndpoint } from './core/oauth/authorize.js';
import { defaultOAuthConfig, type OAuthConfig } from './core/oauth/config.js';
import { TokenInspector } from './core/oauth/inspect.js';
import { KeyRing } from './core/oauth/keys.js';
import { TokenEndpoint } from './core/oauth/token-endpoint.js';
import { TokenIssuer } from './core/oauth/tokens.js';
import { systemClock, type Clock, type PasswordHasher, type Storage } from './core/ports.js';
import { SessionManager } from './core/sessions.js';
import { IdTokenIssuer } from './core/oidc/id-token.js';
import { SingleSignOn } from './core/oidc/sso.js';
import { argon2Hasher } from './infra/argon2.js';
import { openStorage } from './store/index.js';
import { connectRedis, withRedis } from './store/redis/index.js';

/** Everything one Gatehouse process runs on, wired once (the composition root). */
export interface Gatehouse {
  config: Config;
  oauth: OAuthConfig;
  clock: Clock;
  storage: Storage;
  hasher: PasswordHasher;
  keys: KeyRing;
  issuer: TokenIssuer;
  tokenEndpoint: TokenEndpoint;
  authorization: AuthorizationEndpoint;
  inspector: TokenInspector;
  sessions: SessionManager;
  login: LoginGuard;
  /** OpenID Connect ID tokens (src/core/oidc). */
  idTokens: IdTokenIssuer;
  /** Single sign-on sessions and single logout (src/core/oidc/sso.ts). */
  sso: SingleSignOn;
  close(): Promise<void>;
}

export interface GatehouseOptions {
  clock?: Clock;
  hasher?: PasswordHasher;
  storage?: Storage;
}

export async function createGatehouse(config: Config, opts: GatehouseOptions = {}): Promise<Gatehouse> {
  const clock = opts.clock ?? systemClock;
  let storage = opts.storage ?? (await openStorage(config.databaseUrl));
  // With Redis, sessions and rate limits are shared by every process behind one address.
  if (config.redisUrl) storage = withRedis(storage, connectRedis(config.redisUrl), { prefix: config.redisPrefix });
  const hasher = opts.hasher ?? argon2Hasher();
  const oauth: OAuthConfig = {
    ...defaultOAuthConfig(config.authUrl, config.apiUrl),
    accessTokenTtl: config.accessTokenTtl,
    codeTtl: config.codeTtl,
    refreshTokenTtl: config.refreshTokenTtl,
  };
  const keys = new KeyRing(storage.keys, clock);
  await keys.init();
  const issuer = new TokenIssuer(oauth, keys, clock);
  const login = new LoginGuard(storage.users, storage.rateLimits, hasher, clock, storage.events);
  const idTokens = new IdTokenIssuer(oauth, keys, clock);
  const tokenEndpoint = new TokenEndpoint({ storage, config: oauth, clock, issuer, login, idTokens });
  const sessions = new SessionManager(storage.sessions, clock, config.sessionTtl * 1000);
  return {
    config,
    oauth,
    clock,
    storage,
    hasher,
    keys,
    issuer,
    tokenEndpoint,
    authorization: new AuthorizationEndpoint({ storage, config: oauth, clock, issuer }),
    inspector: new TokenInspector({ stores: storage, keys, config: oauth, clock }),
    sessions,
    login,
    idTokens,
    sso: new SingleSignOn({ storage, sessions, keys, config: oauth, clock }),
    close: () => storage.close(),
  };
}
