import { invalidRequest } from '../errors.js';
import type { User } from '../model.js';

/**
 * The OpenID Connect `claims` request parameter (Core §5.5): individual
 * claims asked for in the ID token or from the UserInfo endpoint, each
 * `null` or `{ essential, value, values }`. Only the claims Gatehouse holds
 * are released, and only those whose scope the client may be granted
 * (`profile`, `email`): the person consents to that scope.
 * `essential` is accepted and changes nothing: §5.5.1 makes a claim that
 * cannot be given no error, and every claim we hold can be given.
 */
export interface ClaimsRequest {
  userinfo: string[];
  id_token: string[];
}

/** What each claim we hold is released under (Core §5.4). */
export const CLAIM_SCOPES: Readonly<Record<string, string>> = {
  name: 'profile',
  preferred_username: 'profile',
  email: 'email',
  email_verified: 'email',
  // Issue 28 (src/core/access/claims.ts): values read from the access store, not the user record.
  groups: 'groups',
  roles: 'roles',
};

const MAX_LENGTH = 4096;

function names(member: unknown, where: string): string[] {
  if (member === undefined || member === null) return [];
  if (typeof member !== 'object' || Array.isArray(member)) throw invalidRequest(`claims.${where} must be a JSON object`);
  const out: string[] = [];
  for (const [name, spec] of Object.entries(member)) {
    if (spec !== null && (typeof spec !== 'object' || Array.isArray(spec))) throw invalidRequest(`claims.${where}.${name} must be null or an object`);
    const s = (spec ?? {}) as Record<string, unknown>;
    if (s.essential !== undefined && typeof s.essential !== 'boolean') throw invalidRequest(`claims.${where}.${name}.essential must be a boolean`);
    if (s.values !== undefined && !Array.isArray(s.values)) throw invalidRequest(`claims.${where}.${name}.values must be an array`);
    if (Object.hasOwn(CLAIM_SCOPES, name)) out.push(name);
  }
  return out;
}

/** Parses `claims` (a JSON object); malformed is `invalid_request`; undefined when absent or asking nothing we hold. */
export function parseClaimsRequest(raw: string | undefined): ClaimsRequest | undefined {
  if (raw === undefined) return undefined;
  if (raw.length > MAX_LENGTH) throw invalidRequest('claims is too long');
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw invalidRequest('claims must be a JSON object (OpenID Connect Core §5.5)');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw invalidRequest('claims must be a JSON object (OpenID Connect Core §5.5)');
  const o = v as Record<string, unknown>;
  const req = { userinfo: names(o.userinfo, 'userinfo'), id_token: names(o.id_token, 'id_token') };
  return req.userinfo.length || req.id_token.length ? req : undefined;
}

/** The claims request kept with the sign-in, limited to what `allowed` (scopes the client may get) covers. */
export function limitClaims(req: ClaimsRequest | undefined, allowed: (scope: string) => boolean): ClaimsRequest | undefined {
  if (!req) return undefined;
  const keep = (list: string[]) => list.filter((c) => allowed(CLAIM_SCOPES[c]!));
  const out = { userinfo: keep(req.userinfo), id_token: keep(req.id_token) };
  return out.userinfo.length || out.id_token.length ? out : undefined;
}

/** The scopes a person consents to for these claims. */
export function claimsScopes(req: ClaimsRequest | undefined): string[] {
  return req ? [...new Set([...req.userinfo, ...req.id_token].map((c) => CLAIM_SCOPES[c]!))] : [];
}

/** The values of `names` (claims of CLAIM_SCOPES) we hold for `user`. */
export function claimValues(user: User, names: readonly string[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  if (names.includes('name') && user.name) out.name = user.name;
  if (names.includes('preferred_username')) out.preferred_username = user.username;
  if (names.includes('email')) out.email = user.email;
  // Core §5.1: true only once the person followed a link sent to this very address (src/core/account/verify-email.ts).
  if (names.includes('email') || names.includes('email_verified')) out.email_verified = user.emailVerified === true;
  return out;
}

/** Stored form (the sign-in record), and back; a stored value that does not parse asks for nothing. */
export const encodeClaims = (req: ClaimsRequest | undefined): string | null => (req ? JSON.stringify(req) : null);
export function decodeClaims(stored: string | null | undefined): ClaimsRequest | undefined {
  if (!stored) return undefined;
  try {
    const v = JSON.parse(stored) as ClaimsRequest;
    return Array.isArray(v.userinfo) && Array.isArray(v.id_token) ? v : undefined;
  } catch {
    return undefined;
  }
}
