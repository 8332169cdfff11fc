import type { Clock, Stores } from '../ports.js';
import type { OAuthConfig } from './config.js';
import type { KeyRing } from './keys.js';
import { tokenKey } from './token-key.js';
import { OPAQUE_PREFIX, REFRESH_PREFIX } from './tokens.js';

/** What the server knows about a token it issued. Times in seconds (RFC 7662 style). */
export interface TokenInfo {
  kind: 'access_token' | 'refresh_token';
  active: boolean;
  clientId: string;
  userId: string | null;
  scope: string[];
  iat: number;
  exp: number;
  jti: string | undefined;
  /** For JWT access tokens, so revocation can list the jti until expiry. */
  format: 'jwt' | 'opaque';
  familyId: string | null;
  /** `aud` as issued: a string, or an array of them (RFC 7519 §4.1.3). */
  aud: string | string[] | undefined;
  /** RFC 8705 §3: `x5t#S256` of the client certificate the token is bound to. */
  certThumbprint?: string;
  /** RFC 9449 §6: thumbprint of the DPoP key the token is bound to. */
  dpopJkt?: string;
  /** RFC 8693 §4.1: the `act` claim of an exchanged token. */
  act?: Record<string, unknown>;
}

const secs = (ms: number) => Math.floor(ms / 1000);

const audienceOf = (aud: unknown): string | string[] | undefined =>
  typeof aud === 'string' || (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) ? (aud as string | string[]) : undefined;

/**
 * Finds out what a token is and whether it is still good: used by
 * introspection (RFC 7662), revocation (RFC 7009) and by resource servers that
 * share the authorization server's storage (`table` in docs/oauth.md, Resource server).
 */
export class TokenInspector {
  constructor(private readonly deps: { stores: Stores; keys: KeyRing; config: OAuthConfig; clock: Clock }) {}

  async inspect(token: string): Promise<TokenInfo | undefined> {
    if (token.startsWith(REFRESH_PREFIX)) return this.refresh(token);
    if (token.startsWith(OPAQUE_PREFIX)) return this.opaque(token);
    if (token.split('.').length === 3) return this.jwt(token);
    return undefined;
  }

  private async familyRevoked(familyId: string | null): Promise<boolean> {
    if (!familyId) return false;
    const f = await this.deps.stores.tokens.getFamily(familyId);
    return !f || f.revokedAt !== null;
  }

  private async jwt(token: string): Promise<TokenInfo | undefined> {
    const { keys, config, stores } = this.deps;
    const c = await keys.verify(token, { typ: 'at+jwt', issuer: config.issuer });
    if (!c || typeof c.client_id !== 'string' || typeof c.jti !== 'string') return undefined;
    const familyId = typeof c.fid === 'string' ? c.fid : null;
    const x5t = (c.cnf as Record<string, unknown> | undefined)?.['x5t#S256'];
    const act = c.act !== null && typeof c.act === 'object' && !Array.isArray(c.act) ? (c.act as Record<string, unknown>) : undefined;
    const jkt = (c.cnf as Record<string, unknown> | undefined)?.jkt;
    const [revoked, famRevoked] = await Promise.all([stores.tokens.isJtiRevoked(c.jti), this.familyRevoked(familyId)]);
    return {
      kind: 'access_token', active: !revoked && !famRevoked, clientId: c.client_id,
      userId: c.sub !== c.client_id && typeof c.sub === 'string' ? c.sub : null,
      scope: typeof c.scope === 'string' && c.scope ? c.scope.split(' ') : [], iat: c.iat as number, exp: c.exp as number,
      jti: c.jti, format: 'jwt', familyId, aud: audienceOf(c.aud), ...(act ? { act } : {}),
      ...(typeof x5t === 'string' ? { certThumbprint: x5t } : {}),
      ...(typeof jkt === 'string' ? { dpopJkt: jkt } : {}),
    };
  }

  private async opaque(token: string): Promise<TokenInfo | undefined> {
    const t = await this.deps.stores.tokens.getAccess(tokenKey(token));
    if (!t) return undefined;
    const now = this.deps.clock.now();
    const active = t.revokedAt === null && t.expiresAt > now && !(await this.familyRevoked(t.familyId));
    return {
      kind: 'access_token', active, clientId: t.clientId, userId: t.userId, scope: t.scope, iat: secs(t.createdAt),
      exp: secs(t.expiresAt), jti: t.jti, format: 'opaque', familyId: t.familyId,
      // RFC 8707: the resources it was issued for (one: a string, as in a JWT's aud).
      aud: !t.audience?.length ? this.deps.config.audience : t.audience.length === 1 ? t.audience[0] : t.audience,
      ...(t.act ? { act: t.act } : {}),
      ...(t.certThumbprint ? { certThumbprint: t.certThumbprint } : {}),
      ...(t.dpopJkt ? { dpopJkt: t.dpopJkt } : {}),
    };
  }

  private async refresh(token: string): Promise<TokenInfo | undefined> {
    const t = await this.deps.stores.tokens.getRefresh(tokenKey(token));
    if (!t) return undefined;
    const now = this.deps.clock.now();
    const active = t.revokedAt === null && t.rotatedAt === null && t.expiresAt > now && !(await this.familyRevoked(t.familyId));
    return {
      kind: 'refresh_token', active, clientId: t.clientId, userId: t.userId, scope: t.scope, iat: secs(t.createdAt),
      exp: secs(t.expiresAt), jti: undefined, format: 'opaque', familyId: t.familyId, aud: undefined,
    };
  }
}
