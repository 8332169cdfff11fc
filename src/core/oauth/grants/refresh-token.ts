import { invalidDpopProof, invalidGrant, invalidScope } from '../../errors.js';
import { safeEqual } from '../../crypto.js';
import { required, single } from '../../params.js';
import { formatScope, isSubset, parseScope } from '../../scope.js';
import { tokenTypeOf, type TokenResponse } from '../tokens.js';
import { tokenKey } from '../token-key.js';
import { recordEvent, wouldRecord } from '../../notify/record.js';
import type { Client, RefreshToken } from '../../model.js';
import type { Stores } from '../../ports.js';
import type { Grant, GrantDeps } from './grant.js';
import { allowedResources, grantAudience, requestedResources, resolveResources } from '../resource-indicators.js';

type Outcome = { ok: true; response: TokenResponse } | { ok: false; reason: string };

/**
 * RFC 6749 §6 with rotation (RFC 9700 §4.14.2): every use returns a new
 * refresh token; presenting a used one revokes the whole family, which also
 * cuts off whoever holds the newest token (attacker or victim).
 */
export const refreshTokenGrant: Grant = {
  grantType: 'refresh_token',
  parameters: new Set(['refresh_token', 'scope', 'resource']),
  async handle({ client, params, dpopJkt }, { storage, clock, tokenIssuer, idTokens, config }) {
    const hash = tokenKey(required(params, 'refresh_token'));
    const requested = parseScope(single(params, 'scope'));
    const now = clock.now();

    // One step (src/store/oauth/rotation.ts) when the token alone decides: no narrower scope or
    // resources asked for, a JWT access token (nothing else stored), no token.issued to record with
    // it. Any condition not met writes nothing, and the steps below tell why.
    if (!requested.length && params.resource === undefined && client.tokenFormat === 'jwt' && !(await wouldRecord(storage, 'token.issued'))) {
      const { token: refresh, next } = tokenIssuer.nextRefresh({ client, dpopJkt }, now);
      const old = await storage.tokens.rotateRefresh({ tokenHash: hash, clientId: client.id, now, jkt: dpopJkt ?? null, next });
      if (old) {
        const audience = grantAudience(resolveResources([], allowedResources(client, config.audience)) ?? [], old.resources);
        return issued(storage, { client, old, scope: old.scope, audience, dpopJkt, refresh }, { tokenIssuer, idTokens });
      }
    }

    // Read-only checks first, so a foreign client cannot burn someone else's token.
    const existing = await storage.tokens.getRefresh(hash);
    if (!existing || existing.clientId !== client.id) throw invalidGrant('invalid refresh token');
    if (existing.revokedAt !== null || existing.expiresAt <= now) throw invalidGrant('refresh token expired or revoked');
    // §6: the new scope must not include any scope not originally granted.
    if (requested.length && !isSubset(requested, existing.scope)) throw invalidScope('requested scope exceeds the original grant');
    const scope = requested.length ? requested : existing.scope;
    // RFC 8707 §2.2: within the grant's resources when it named some, else the client's allowed set.
    const audience = grantAudience(resolveResources(requestedResources(params), allowedResources(client, config.audience)) ?? [], existing.resources);
    // RFC 9449 §5: a public client's bound refresh token needs a proof by the same key; checked
    // before rotation, so a thief without the key can neither use nor burn it.
    if (existing.dpopJkt !== undefined) {
      if (!dpopJkt) throw invalidDpopProof('the refresh token is bound to a DPoP key: send a DPoP proof');
      if (!safeEqual(dpopJkt, existing.dpopJkt)) throw invalidGrant('the refresh token is bound to another DPoP key');
    }

    const outcome = await storage.transaction<Outcome>(async (tx) => {
      const rotated = await tx.tokens.markRotated(hash, now);
      if (!rotated) return { ok: false, reason: 'invalid refresh token' };
      if (rotated.reuse) {
        // Returned, not thrown, so the revocation and its event commit.
        await tx.tokens.revokeFamily(rotated.token.familyId, now);
        await recordEvent(tx, 'refresh_token.reuse_detected', { client_id: rotated.token.clientId, user_id: rotated.token.userId, family_id: rotated.token.familyId }, now);
        return { ok: false, reason: 'refresh token reuse detected; the grant has been revoked' };
      }
      const family = await tx.tokens.getFamily(existing.familyId);
      if (!family || family.revokedAt !== null) return { ok: false, reason: 'grant revoked' };
      // §6: the new refresh token keeps the original scope, even when the access token is narrowed.
      const refresh = await tokenIssuer.refreshToken(tx, { client, userId: existing.userId, familyId: existing.familyId, dpopJkt, scope: existing.scope, resources: existing.resources });
      return { ok: true, response: await issued(tx, { client, old: existing, scope, audience, dpopJkt, refresh }, { tokenIssuer, idTokens }) };
    });
    if (!outcome.ok) throw invalidGrant(outcome.reason);
    return outcome.response;
  },
};

/** The response to a rotation: a new access token (narrowed to `scope`) beside the new refresh token. */
async function issued(
  stores: Stores,
  r: { client: Client; old: RefreshToken; scope: string[]; audience: string[] | undefined; dpopJkt: string | undefined; refresh: string },
  { tokenIssuer, idTokens }: Pick<GrantDeps, 'tokenIssuer' | 'idTokens'>,
): Promise<TokenResponse> {
  const base = { client: r.client, userId: r.old.userId, familyId: r.old.familyId, dpopJkt: r.dpopJkt };
  const { token, expiresIn } = await tokenIssuer.accessToken(stores, { ...base, scope: r.scope, audience: r.audience });
  const response: TokenResponse = { access_token: token, token_type: tokenTypeOf(base), expires_in: expiresIn, scope: formatScope(r.scope), refresh_token: r.refresh };
  // OpenID Connect Core §12.2: a fresh ID token when the original grant had openid.
  await idTokens?.attach(stores, response, { client: r.client, userId: r.old.userId, scope: r.old.scope, familyId: r.old.familyId, nonce: null });
  return response;
}
