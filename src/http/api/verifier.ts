import { CachedVerifier, TokenRouter } from '../../core/resource/cache.js';
import { IntrospectionVerifier } from '../../core/resource/introspection.js';
import { RemoteJwks } from '../../core/resource/jwks.js';
import { JwtVerifier } from '../../core/resource/jwt.js';
import { TableVerifier } from '../../core/resource/table.js';
import type { AccessTokenVerifier } from '../../core/resource/token.js';
import type { Gatehouse } from '../../gatehouse.js';

/** Verified JWTs are remembered this long: the same bytes verify the same way, only `exp` is rechecked. */
const JWT_CACHE_MS = 60_000;

/**
 * The token check of {api_url}, as `GATEHOUSE_TOKEN_VERIFICATION` says
 * (spec §5.5). Opaque tokens can only be looked up, so `local` still sends
 * them to the token table, which this process shares anyway: it reads the
 * users table to answer `/user`.
 */
export function apiVerifier(gh: Gatehouse): AccessTokenVerifier {
  const { config, clock } = gh;
  const issuer = gh.oauth.issuer;
  const audience = [gh.oauth.audience];
  const ttlMs = config.introspectionCacheTtl * 1000;
  const table = new CachedVerifier(new TableVerifier(gh.inspector, { audience, clock }), { ttlMs, clock });
  switch (config.tokenVerification) {
    case 'table':
      return table;
    case 'local': {
      const keys = new RemoteJwks({ uri: `${config.authUrl}/.well-known/jwks.json`, clock });
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
      }), { ttlMs, clock });
  }
}

/** Built on first use: the API's own URL (the tokens' `aud`) is known only once it listens. */
export function lazyVerifier(make: () => AccessTokenVerifier): AccessTokenVerifier {
  let verifier: AccessTokenVerifier | undefined;
  return { verify: (token) => (verifier ??= make()).verify(token) };
}
