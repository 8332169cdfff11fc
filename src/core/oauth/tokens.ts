import { randomUUID } from 'node:crypto';
import { isPublic, type Client } from '../model.js';
import type { Clock, NextRefresh, Stores } from '../ports.js';
import { formatScope } from '../scope.js';
import type { OAuthConfig } from './config.js';
import type { KeyRing } from './keys.js';
import { rfc3339, type EventPayloads } from '../notify/events.js';
import { recordEvent, whileRecording } from '../notify/record.js';
import { certificateBinding } from './mtls.js';
import { audienceClaim } from './resource-indicators.js';
import { newToken, tokenKey } from './token-key.js';
import type { AccessClaims } from '../access/claims.js';
import { levelClaims } from '../oidc/acr.js';

/** Prefixes make leaked tokens recognisable to secret scanners; what follows: src/core/oauth/token-key.ts. */
export const OPAQUE_PREFIX = 'gh_at_';
export const REFRESH_PREFIX = 'gh_rt_';

/** RFC 6749 §5.1 successful token response; `DPoP` for a DPoP-bound token (RFC 9449 §5). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope: string;
  refresh_token?: string;
  [extra: string]: unknown;
}

export interface AccessTokenRequest {
  client: Client;
  userId: string | null;
  scope: string[];
  familyId: string | null;
  /** RFC 8707: the resources the token is for (its `aud`); absent: the built-in API. */
  audience?: string[] | undefined;
  /** RFC 8707 §2.2: the grant's resources, kept with its refresh token. */
  resources?: string[] | undefined;
  /** RFC 8693 §4.1: the acting party of an exchanged token (delegation). */
  act?: Record<string, unknown> | undefined;
  /** RFC 9449 §6: thumbprint of the key of the request's DPoP proof, which the token is bound to. */
  dpopJkt?: string | undefined;
  /** RFC 8705 §3: a certificate to bind to besides the client's own (an exchanged token keeps its subject's). */
  certThumbprint?: string | undefined;
  /** Epoch ms the token must not outlive (RFC 8693: an exchanged token ends with its subject token). */
  notAfter?: number | undefined;
}

/** RFC 9449 §5: the `token_type` of a response. */
export const tokenTypeOf = (req: { dpopJkt?: string | undefined }): 'Bearer' | 'DPoP' => (req.dpopJkt ? 'DPoP' : 'Bearer');

/** Claims of our JWT access tokens (RFC 9068 §2.2). `fid` names the token family. */
export interface AccessTokenClaims {
  iss: string;
  sub: string;
  aud: string | string[];
  client_id: string;
  scope: string;
  iat: number;
  exp: number;
  jti: string;
  fid?: string;
  /** RFC 8693 §4.1: who acts for the subject. */
  act?: Record<string, unknown>;
  /** RFC 8705 §3.1: the client certificate the token is bound to; RFC 9449 §6.1: the DPoP key. */
  cnf?: { 'x5t#S256'?: string; jkt?: string };
  /** Scopes `groups` and `roles` (src/core/access/claims.ts): the person's group and role names when the token was issued. */
  groups?: string[];
  roles?: string[];
  /** RFC 9470 §6 (src/core/oidc/acr.ts). */
  acr?: string;
  auth_time?: number;
}

export class TokenIssuer {
  constructor(
    private readonly config: OAuthConfig,
    private readonly keys: KeyRing,
    private readonly clock: Clock,
    /** A person's groups and roles, for tokens granted scope `groups` or `roles`. */
    private readonly accessClaims?: AccessClaims,
  ) {}

  /**
   * JWT access tokens are self-contained and not stored (the hot path stays a
   * signature); opaque ones are stored by hash only. token.issued is recorded
   * through the same `stores` (the caller's transaction) only while an
   * endpoint subscribes to it.
   */
  async accessToken(stores: Stores, req: AccessTokenRequest): Promise<{ token: string; expiresIn: number }> {
    const now = this.clock.now();
    const ttl = req.notAfter === undefined ? this.config.accessTokenTtl : Math.max(0, Math.min(this.config.accessTokenTtl, Math.floor((req.notAfter - now) / 1000)));
    const jti = randomUUID();
    const bound = req.certThumbprint ?? certificateBinding(req.client);
    const issued: EventPayloads['token.issued'] = {
      client_id: req.client.id, user_id: req.userId, scope: req.scope, token_format: req.client.tokenFormat, jti,
      family_id: req.familyId, expires_at: rfc3339(now + ttl * 1000),
    };
    if (req.client.tokenFormat === 'opaque') {
      await recordEvent(stores, 'token.issued', issued, now);
      const token = newToken(OPAQUE_PREFIX, now);
      await stores.tokens.saveAccess({
        tokenHash: tokenKey(token), jti, familyId: req.familyId, clientId: req.client.id, userId: req.userId,
        scope: req.scope, createdAt: now, expiresAt: now + ttl * 1000, revokedAt: null, ...(bound ? { certThumbprint: bound } : {}),
        ...(req.audience?.length ? { audience: req.audience } : {}), ...(req.act ? { act: req.act } : {}),
        ...(req.dpopJkt ? { dpopJkt: req.dpopJkt } : {}),
      });
      return { token, expiresIn: ttl };
    }
    const iat = Math.floor(now / 1000);
    // Read only when the scope asks for them: other tokens stay a signature.
    const access = this.accessClaims ? await this.accessClaims.values(req.userId, req.scope) : {};
    // RFC 9470 §6: how and when the person authenticated, for a family started by a sign-in.
    const level = req.userId ? await levelClaims(stores.signIns, req.familyId) : {};
    const claims: AccessTokenClaims = {
      iss: this.config.issuer,
      sub: req.userId ?? req.client.id,
      aud: audienceClaim(req.audience, this.config.audience),
      client_id: req.client.id,
      scope: formatScope(req.scope),
      iat,
      exp: iat + ttl,
      jti,
      ...(req.familyId ? { fid: req.familyId } : {}),
      ...(req.act ? { act: req.act } : {}),
      ...(bound || req.dpopJkt ? { cnf: { ...(bound ? { 'x5t#S256': bound } : {}), ...(req.dpopJkt ? { jkt: req.dpopJkt } : {}) } } : {}),
      ...level,
      ...access,
    };
    // Signed while its event commits (a JWT is not stored); the answer waits for both.
    const recorded = recordEvent(stores, 'token.issued', issued, now);
    return { token: await whileRecording(recorded, () => this.keys.signAsync(claims as unknown as Record<string, unknown>, 'at+jwt')), expiresIn: ttl };
  }

  async refreshToken(stores: Stores, req: AccessTokenRequest & { familyId: string }): Promise<string> {
    const now = this.clock.now();
    const { token, next } = this.nextRefresh(req, now);
    await stores.tokens.saveRefresh({
      tokenHash: next.tokenHash, familyId: req.familyId, clientId: req.client.id, userId: req.userId, scope: req.scope,
      createdAt: now, expiresAt: next.expiresAt, rotatedAt: null, revokedAt: null,
      ...(req.resources?.length ? { resources: req.resources } : {}),
      ...(next.dpopJkt ? { dpopJkt: next.dpopJkt } : {}),
    });
    return token;
  }

  /**
   * A new refresh token and what is stored of it besides its grant (the
   * one-step rotation and code redemption store it with the grant's write).
   */
  nextRefresh(req: Pick<AccessTokenRequest, 'client' | 'dpopJkt'>, now: number): { token: string; next: NextRefresh } {
    const token = newToken(REFRESH_PREFIX, now);
    return {
      token,
      next: {
        tokenHash: tokenKey(token), expiresAt: now + this.config.refreshTokenTtl * 1000,
        // RFC 9449 §5: a public client has no other credential, so its refresh token is bound to the key;
        // a confidential client's is bound to its authentication already.
        dpopJkt: req.dpopJkt && isPublic(req.client) ? req.dpopJkt : null,
      },
    };
  }

  /**
   * Access token plus, when the client may refresh, a refresh token, in one
   * response (RFC 6749 §5.1).
   */
  async respond(stores: Stores, req: AccessTokenRequest, withRefresh: boolean): Promise<TokenResponse> {
    const { token, expiresIn } = await this.accessToken(stores, req);
    const res: TokenResponse = { access_token: token, token_type: tokenTypeOf(req), expires_in: expiresIn, scope: formatScope(req.scope) };
    if (withRefresh && req.familyId) res.refresh_token = await this.refreshToken(stores, { ...req, familyId: req.familyId });
    return res;
  }
}
