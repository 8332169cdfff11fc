/** What a resource server knows about a valid access token, however it was checked. */
export interface VerifiedToken {
  /** `sub`: the user, or the client itself for client-credentials tokens. */
  subject: string;
  clientId: string;
  /** The user behind the token; null when the client acts for itself (Gatehouse sets `sub` = `client_id` then). */
  userId: string | null;
  scope: string[];
  /** Unix milliseconds. */
  expiresAt: number;
  /** `iat`, Unix seconds, when the token states it: /user refuses a token older than the account's latest lock. */
  iat?: number;
  jti: string | undefined;
  /** RFC 8705 §3: `x5t#S256` of the client certificate the token is bound to (`cnf`), if it is. */
  certThumbprint?: string;
  /** RFC 9449 §6: thumbprint of the DPoP key the token is bound to (`cnf.jkt`), if it is. */
  dpopJkt?: string;
  /** How it was checked. */
  via: 'jwt' | 'table' | 'introspection';
  /** RFC 9470 §6: the person's authentication level and time (Unix seconds), when the token says. */
  acr?: string;
  authTime?: number;
  /** Scopes `groups` and `roles` (issue 28): the names, when the token carries them. */
  roles?: string[];
  groups?: string[];
}

const names = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

/** `acr`, `auth_time`, `roles` and `groups` from a JWT's claims or an introspection answer. */
export function personClaims(c: Record<string, unknown>): Pick<VerifiedToken, 'acr' | 'authTime' | 'roles' | 'groups'> {
  const roles = names(c.roles);
  const groups = names(c.groups);
  return {
    ...(typeof c.acr === 'string' ? { acr: c.acr } : {}),
    ...(typeof c.auth_time === 'number' ? { authTime: c.auth_time } : {}),
    ...(roles ? { roles } : {}),
    ...(groups ? { groups } : {}),
  };
}

/**
 * Checks an access token. Throws an `GatehouseError`: `invalid_token` for a token
 * that is not good (RFC 6750 §3.1), `temporarily_unavailable` when the
 * authorization server could not be asked.
 */
export interface AccessTokenVerifier {
  verify(token: string): Promise<VerifiedToken>;
}

export const userOf = (subject: string, clientId: string): string | null => (subject === clientId ? null : subject);

/** `aud` may be a string or an array (RFC 7519 §4.1.3). */
export function audienceMatches(aud: unknown, expected: readonly string[]): boolean {
  if (typeof aud === 'string') return expected.includes(aud);
  return Array.isArray(aud) && aud.some((a) => typeof a === 'string' && expected.includes(a));
}

export const splitScope = (scope: unknown): string[] => (typeof scope === 'string' ? scope.split(' ').filter(Boolean) : []);
