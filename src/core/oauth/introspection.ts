import { GatehouseError } from '../errors.js';
import { levelClaims } from '../oidc/acr.js';
import { required, single } from '../params.js';
import type { Clock, Storage } from '../ports.js';
import type { CredentialThrottle } from '../throttle.js';
import { formatScope } from '../scope.js';
import { recordEvent } from '../notify/record.js';
import { accountUsable } from '../account-lock.js';
import { authenticateClient } from './client-auth.js';
import { tokenKey } from './token-key.js';
import type { ClientAssertions } from './client-assertion.js';
import type { OAuthConfig } from './config.js';
import type { TokenInspector } from './inspect.js';
import type { TokenRequest } from './token-endpoint.js';
import type { AccessClaims } from '../access/claims.js';

/**
 * RFC 7662. Closed unless the caller authenticates as a client registered to
 * introspect (§4: otherwise the endpoint is a token-scanning oracle).
 */
export async function introspect(
  req: TokenRequest,
  deps: {
    storage: Storage; inspector: TokenInspector; config: OAuthConfig; clock: Clock; clientThrottle: CredentialThrottle; clientAssertions?: ClientAssertions;
    access?: { claims: AccessClaims };
  },
): Promise<Record<string, unknown>> {
  const { client } = await authenticateClient(deps.storage.clients, req, deps.clock.now(), deps.clientThrottle, deps.clientAssertions);
  if (!client.introspect) throw new GatehouseError('unauthorized_client', 'client is not allowed to introspect tokens', 403);
  const token = required(req.params, 'token');
  single(req.params, 'token_type_hint');
  const info = await deps.inspector.inspect(token);
  if (!info || !info.active) return { active: false };
  const user = info.userId ? await deps.storage.users.get(info.userId) : undefined;
  // A locked account's tokens are inactive, self-contained ones too, and after an unlock those issued before the lock.
  if (info.userId && user && !accountUsable(user, { iat: info.iat })) return { active: false };
  return {
    active: true,
    scope: formatScope(info.scope),
    client_id: info.clientId,
    ...(user ? { username: user.username } : {}),
    // RFC 9449 §6.2: a DPoP-bound access token is of type DPoP.
    token_type: info.kind === 'access_token' ? (info.dpopJkt ? 'DPoP' : 'Bearer') : 'refresh_token',
    exp: info.exp,
    iat: info.iat,
    sub: info.userId ?? info.clientId,
    ...(info.aud ? { aud: info.aud } : {}),
    iss: deps.config.issuer,
    ...(info.jti ? { jti: info.jti } : {}),
    // RFC 8693 §4.1, §4.4 (RFC 7662 response): who acts for the subject of an exchanged token.
    ...(info.act ? { act: info.act } : {}),
    // RFC 8705 §3.2: the resource server learns which certificate the token is bound to.
    // RFC 9449 §6.2: and which DPoP key (`jkt`).
    ...(info.certThumbprint || info.dpopJkt ? { cnf: { ...(info.certThumbprint ? { 'x5t#S256': info.certThumbprint } : {}), ...(info.dpopJkt ? { jkt: info.dpopJkt } : {}) } } : {}),
    // RFC 9470 §6: the level and time of the sign-in the token's family started from.
    ...(info.kind === 'access_token' && info.userId ? await levelClaims(deps.storage.signIns, info.familyId) : {}),
    // Issue 28: the person's groups and roles as they are now (an ended elevation is gone even from a token issued during it).
    ...(info.kind === 'access_token' && deps.access ? await deps.access.claims.values(info.userId, info.scope) : {}),
  };
}

/**
 * RFC 7009. Revoking a refresh token revokes its whole family, access tokens
 * included (§2.1). Tokens of other clients and unknown tokens are ignored with
 * 200, so the endpoint reveals nothing (§2.2).
 */
export async function revoke(
  req: TokenRequest,
  deps: { storage: Storage; inspector: TokenInspector; clock: Clock; clientThrottle: CredentialThrottle; clientAssertions?: ClientAssertions },
): Promise<void> {
  const now = deps.clock.now();
  const { client } = await authenticateClient(deps.storage.clients, req, now, deps.clientThrottle, deps.clientAssertions);
  const token = required(req.params, 'token');
  single(req.params, 'token_type_hint');
  const info = await deps.inspector.inspect(token);
  if (!info || info.clientId !== client.id) return;
  // The revocation and its token.revoked event commit together.
  await deps.storage.transaction(async (tx) => {
    if (info.kind === 'refresh_token') {
      if (!info.familyId) return;
      await tx.tokens.revokeFamily(info.familyId, now);
    } else if (info.format === 'opaque') {
      await tx.tokens.revokeAccess(tokenKey(token), now);
    } else if (info.jti) {
      await tx.tokens.revokeJti(info.jti, info.exp * 1000);
    } else {
      return;
    }
    await recordEvent(tx, 'token.revoked', {
      client_id: info.clientId, user_id: info.userId, token_type: info.kind, family_id: info.familyId, jti: info.jti ?? null,
    }, now);
  });
}
