import { invalidDpopProof, invalidGrant, invalidRequest } from '../../errors.js';
import { s256, safeEqual, sha256 } from '../../crypto.js';
import { required, single } from '../../params.js';
import type { AuthorizationCode, Client } from '../../model.js';
import type { Storage, Stores } from '../../ports.js';
import { recordEvent, wouldRecord } from '../../notify/record.js';
import { accountUsable } from '../../account-lock.js';
import { formatScope } from '../../scope.js';
import { tokenTypeOf, type TokenResponse } from '../tokens.js';
import { mayRefresh, type Grant, type GrantDeps } from './grant.js';
import { allowedResources, grantAudience, requestedResources, resolveResources } from '../resource-indicators.js';

/** RFC 7636 §4.1: code_verifier = 43*128unreserved. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** RFC 6749 §4.1.3, with RFC 7636 PKCE and RFC 9700 §4.5 replay handling. */
export const authorizationCodeGrant: Grant = {
  grantType: 'authorization_code',
  parameters: new Set(['code', 'redirect_uri', 'code_verifier', 'resource']),
  async handle({ client, params, dpopJkt }, { storage, clock, tokenIssuer, idTokens, config }) {
    const code = required(params, 'code');
    const redirectUri = single(params, 'redirect_uri');
    const verifier = single(params, 'code_verifier');
    if (verifier !== undefined && !VERIFIER.test(verifier)) throw invalidRequest('malformed code_verifier');
    // RFC 8707: a malformed or unknown resource is refused before the code is burnt.
    const requestedTargets = resolveResources(requestedResources(params), allowedResources(client, config.audience)) ?? [];
    const now = clock.now();

    // One step (src/store/oauth/rotation.ts) when nothing beside the code is written with the tokens: a
    // JWT access token, no token.issued to record, no resources asked for. Every check below is a
    // condition of it; any one not met writes nothing, and the steps below burn the code and tell why.
    if (params.resource === undefined && client.tokenFormat === 'jwt' && !(await wouldRecord(storage, 'token.issued'))) {
      const refresh = mayRefresh(client) ? tokenIssuer.nextRefresh({ client, dpopJkt }, now) : undefined;
      const c = await storage.codes.redeem({
        codeHash: sha256(code), clientId: client.id, now, redirectUri: redirectUri ?? null,
        challenge: verifier === undefined ? null : s256(verifier), jkt: dpopJkt ?? null, refresh: refresh?.next ?? null,
      });
      if (c) {
        await refuseLocked(storage, c, now);
        return redeemed(storage, c, { client, dpopJkt, refresh: refresh?.token }, { tokenIssuer, idTokens });
      }
    }

    // Atomically burn the single-use code before anything else is checked;
    // only the client it was issued to can (RFC 6749 §4.1.3): another client's
    // attempt neither burns it nor counts as a replay.
    const consumed = await storage.codes.consume(sha256(code), client.id, now);
    if (!consumed) throw invalidGrant('invalid authorization code');
    const c = consumed.code;
    if (consumed.replay) {
      // RFC 6749 §4.1.2: a code used twice revokes what was issued from it.
      await revokeIssuedFrom(storage, c, now);
      // After the (idempotent) revocation, so a replay is never reported without it.
      await recordEvent(storage, 'authorization_code.reuse_detected', { client_id: c.clientId, user_id: c.userId, family_id: c.familyId }, now);
      throw invalidGrant('authorization code already used');
    }
    if (c.expiresAt <= now) throw invalidGrant('authorization code expired');
    const audience = grantAudience(requestedTargets, c.resources);
    // §4.1.3: required and identical when the authorization request carried one.
    if (c.redirectUri !== null && redirectUri !== c.redirectUri) throw invalidGrant('redirect_uri does not match the authorization request');
    if (c.codeChallenge) {
      if (!verifier) throw invalidGrant('code_verifier required');
      if (!safeEqual(s256(verifier), c.codeChallenge)) throw invalidGrant('code_verifier does not match the code_challenge');
    } else if (verifier !== undefined) {
      // RFC 9700 §2.1.1: a verifier without a challenge is a PKCE downgrade attempt.
      throw invalidGrant('code_verifier sent but the authorization request had no code_challenge');
    }
    // RFC 9449 §10: a code requested with dpop_jkt is redeemed only with a proof by that key.
    if (c.dpopJkt !== undefined) {
      if (!dpopJkt) throw invalidDpopProof('the authorization code is bound to a DPoP key (dpop_jkt): send a DPoP proof');
      if (!safeEqual(dpopJkt, c.dpopJkt)) throw invalidGrant('the DPoP proof is by another key than the dpop_jkt of the authorization request');
    }

    // A concurrent replay may have written the family already, revoked (see
    // revokeIssuedFrom): the tokens are then born revoked, as they would be had
    // the replay come a moment later. If it wrote it between our read and our
    // insert, the insert fails and the second try finds it.
    const issue = () => storage.transaction(async (tx) => {
      if (!(await tx.tokens.getFamily(c.familyId))) {
        await tx.tokens.createFamily({ id: c.familyId, clientId: client.id, userId: c.userId, scope: c.scope, createdAt: now, revokedAt: null });
      }
      const response = await tokenIssuer.respond(tx, { client, userId: c.userId, scope: c.scope, familyId: c.familyId, audience, resources: c.resources, dpopJkt }, mayRefresh(client));
      // OpenID Connect Core §3.1.3.3: an ID token beside the access token when openid was granted.
      await idTokens?.attach(tx, response, { client, userId: c.userId, scope: c.scope, familyId: c.familyId, nonce: c.nonce, authTime: c.authTime });
      return response;
    });
    let response: TokenResponse;
    try {
      response = await issue();
    } catch (e) {
      if (!(await storage.tokens.getFamily(c.familyId))) throw e;
      response = await issue();
    }
    await refuseLocked(storage, c, now);
    return response;
  },
};

/**
 * A code of an account locked since it was issued is not exchanged
 * (src/core/account-lock.ts). Checked after the family is written, so a lock
 * that committed meanwhile either revoked the family or is seen here.
 */
async function refuseLocked(storage: Pick<Storage, 'users' | 'tokens'>, c: AuthorizationCode, now: number): Promise<void> {
  if (accountUsable(await storage.users.get(c.userId))) return;
  await storage.tokens.revokeFamily(c.familyId, now);
  throw invalidGrant('the account is locked');
}

/**
 * The first redemption may still be in flight and not have created the token
 * family yet, and revoking rows that do not exist yet would be lost. So the
 * family is written first, already revoked; when it exists, it is revoked
 * with every token it holds.
 */
async function revokeIssuedFrom(storage: Storage, c: AuthorizationCode, now: number): Promise<void> {
  try {
    await storage.tokens.createFamily({ id: c.familyId, clientId: c.clientId, userId: c.userId, scope: c.scope, createdAt: now, revokedAt: now });
  } catch {
    // Already there (tokens issued or being issued): revoked below.
  }
  await storage.tokens.revokeFamily(c.familyId, now);
}

/** The response to a code redeemed in one step, its refresh token (if any) already stored. */
async function redeemed(
  stores: Stores,
  c: AuthorizationCode,
  r: { client: Client; dpopJkt: string | undefined; refresh: string | undefined },
  { tokenIssuer, idTokens }: Pick<GrantDeps, 'tokenIssuer' | 'idTokens'>,
): Promise<TokenResponse> {
  const req = { client: r.client, userId: c.userId, scope: c.scope, familyId: c.familyId, audience: grantAudience([], c.resources), dpopJkt: r.dpopJkt };
  const { token, expiresIn } = await tokenIssuer.accessToken(stores, req);
  const response: TokenResponse = { access_token: token, token_type: tokenTypeOf(req), expires_in: expiresIn, scope: formatScope(c.scope) };
  if (r.refresh) response.refresh_token = r.refresh;
  // OpenID Connect Core §3.1.3.3: an ID token beside the access token when openid was granted.
  await idTokens?.attach(stores, response, { client: r.client, userId: c.userId, scope: c.scope, familyId: c.familyId, nonce: c.nonce, authTime: c.authTime });
  return response;
}
