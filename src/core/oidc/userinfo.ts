import type { User } from '../model.js';
import type { UserStore } from '../ports.js';
import type { SignInStore } from './ports.js';
import { CLAIM_SCOPES, claimValues, decodeClaims } from './claims-request.js';
import type { TokenInspector } from '../oauth/inspect.js';
import { insufficientScope, invalidToken } from '../resource/errors.js';
import { audienceMatches } from '../resource/token.js';
import { OPENID } from './id-token.js';
import type { AccessClaims } from '../access/claims.js';
import { accountUsable } from '../account-lock.js';

/**
 * Standard claims by scope (OpenID Connect Core §5.4): `profile` gives the
 * name claims we hold, `email` the address with `email_verified` beside it
 * (true only once a link sent to that address was followed).
 */
export function userInfoClaims(user: User, scope: readonly string[], requested: readonly string[] = []): Record<string, string | boolean> {
  // OpenID Connect Core §5.5: claims asked for one by one, beside those of the scopes.
  const names = Object.keys(CLAIM_SCOPES).filter((c) => scope.includes(CLAIM_SCOPES[c]!) || requested.includes(c));
  return { sub: user.id, ...claimValues(user, names) };
}

export const USERINFO_CLAIMS = ['sub', 'name', 'preferred_username', 'email', 'email_verified', 'groups', 'roles'];

/**
 * The UserInfo endpoint (§5.3): an access token we issued, still active, for
 * the audience Gatehouse issues its access tokens for (`audience`, the API
 * URL; RFC 9068 §4 step 4), granted `openid`, standing for a person. Failures
 * are RFC 6750 §3.1 errors (§5.3.3).
 */
export async function userInfo(
  deps: { inspector: TokenInspector; users: UserStore; signIns?: SignInStore; audience: string; accessClaims?: AccessClaims }, token: string,
): Promise<Record<string, string | string[] | boolean>> {
  const info = await deps.inspector.inspect(token);
  if (!info || info.kind !== 'access_token' || !info.active) throw invalidToken('the access token is invalid, expired or revoked');
  if (!audienceMatches(info.aud, [deps.audience])) throw invalidToken('the access token is meant for another audience');
  // RFC 9449 §7.2: a DPoP-bound token is never a bearer credential, and this endpoint takes bearer tokens only.
  if (info.dpopJkt) throw invalidToken('the access token is DPoP-bound: it cannot be used as a bearer token');
  if (!info.scope.includes(OPENID)) throw insufficientScope([OPENID]);
  const user = info.userId ? await deps.users.get(info.userId) : undefined;
  if (!user) throw invalidToken('the access token does not belong to a user');
  // As /user and introspection: refused while the account is locked, and if issued before its latest lock.
  if (!accountUsable(user, { iat: info.iat })) throw invalidToken('the account is locked, or the token was issued before its lock');
  // The claims request of the authorization this token comes from (kept with its sign-in, by family).
  const signIn = info.familyId && deps.signIns ? await deps.signIns.byFamily(info.familyId) : undefined;
  const requested = decodeClaims(signIn?.claims)?.userinfo;
  return { ...userInfoClaims(user, info.scope, requested), ...await deps.accessClaims?.values(user.id, info.scope, requested) };
}
