import type { OutboundHttp } from '../outbound.js';
import type { Clock } from '../ports.js';
import { invalidToken, unavailable } from './errors.js';
import { certBinding } from './binding.js';
import { audienceMatches, personClaims, splitScope, userOf, type AccessTokenVerifier, type VerifiedToken } from './token.js';

export interface IntrospectionOptions {
  /** The authorization server's introspection endpoint (Gatehouse: {auth_url}/oauth/check_token). */
  endpoint: string;
  /** A client registered with `--introspect` (RFC 7662 §2.1: the caller must authenticate). */
  clientId: string;
  clientSecret: string;
  /** When the response carries `iss`, it must match; `aud` must be there and name this resource server. */
  issuer: string;
  audience: readonly string[];
  clock: Clock;
  /** The server-side HTTP client (src/infra/outbound/). */
  http: OutboundHttp;
  timeoutMs?: number;
}

/** RFC 6749 §2.3.1: id and secret are form-encoded before Basic. */
const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');

/**
 * Asks the authorization server about each token (RFC 7662). Works for
 * opaque tokens and sees revocation; wrap it in a `CachedVerifier` so that a
 * busy resource server asks once per token per cache lifetime.
 */
export class IntrospectionVerifier implements AccessTokenVerifier {
  private readonly authorization: string;

  constructor(private readonly opts: IntrospectionOptions) {
    this.authorization = `Basic ${Buffer.from(`${formEncode(opts.clientId)}:${formEncode(opts.clientSecret)}`).toString('base64')}`;
  }

  async verify(token: string): Promise<VerifiedToken> {
    let body: Record<string, unknown>;
    try {
      const res = await this.opts.http({
        url: this.opts.endpoint,
        method: 'POST',
        headers: { authorization: this.authorization, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        timeoutMs: this.opts.timeoutMs ?? 5000,
      });
      // A 4xx here means our own credentials are wrong: a server problem, not the caller's.
      if (res.status !== 200) throw new Error(`introspection answered HTTP ${res.status}`);
      body = JSON.parse(res.body) as Record<string, unknown>;
      if (!body || typeof body !== 'object') throw new Error('introspection answered no object');
    } catch {
      throw unavailable('the authorization server could not check the token');
    }
    // RFC 7662 §2.2: anything but "active": true means the token must not be honoured.
    if (body.active !== true) throw invalidToken('token is not active (expired, revoked or unknown)');
    // RFC 9449 §6.2: a DPoP-bound access token introspects as token_type DPoP.
    if (typeof body.token_type === 'string' && !['bearer', 'dpop'].includes(body.token_type.toLowerCase())) throw invalidToken('not an access token');
    if (body.iss !== undefined && body.iss !== this.opts.issuer) throw invalidToken('token issued by another authorization server');
    // RFC 9068 §4 step 4, RFC 7662 §4: the token must be meant for us, so an answer naming no audience is refused.
    if (!audienceMatches(body.aud, this.opts.audience)) throw invalidToken('token is meant for another audience');
    const now = this.opts.clock.now();
    if (typeof body.exp === 'number' && body.exp * 1000 <= now) throw invalidToken('token expired');
    const clientId = typeof body.client_id === 'string' ? body.client_id : '';
    const subject = typeof body.sub === 'string' ? body.sub : clientId;
    if (!subject) throw invalidToken('token has no subject');
    return {
      subject,
      clientId,
      userId: userOf(subject, clientId),
      scope: splitScope(body.scope),
      // Without exp the answer is good for as long as the cache keeps it.
      expiresAt: typeof body.exp === 'number' ? body.exp * 1000 : Number.MAX_SAFE_INTEGER,
      ...(typeof body.iat === 'number' ? { iat: body.iat } : {}),
      jti: typeof body.jti === 'string' ? body.jti : undefined,
      ...certBinding(body.cnf),
      ...personClaims(body),
      via: 'introspection',
    };
  }
}
