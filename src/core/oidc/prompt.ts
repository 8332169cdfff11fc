import { GatehouseError, invalidRequest } from '../errors.js';
import { single, type Params } from '../params.js';
import { acrFor, acrRank, meetsAcr } from './acr.js';

/** OpenID Connect Core §3.1.2.1 `prompt` values. Account selection has nothing to choose from here, so it just proceeds. */
export const PROMPT_VALUES = ['none', 'login', 'consent', 'select_account'] as const;
export type Prompt = (typeof PROMPT_VALUES)[number];

export interface AuthenticationParams {
  prompt: Prompt[];
  /** Seconds; the person must have authenticated at most this long ago. */
  maxAge: number | undefined;
  /** `acr_values` (§3.1.2.1), treated as required (RFC 9470 §4): the lowest known level asked for must be met. */
  acrValues?: string[];
}

const MAX_AGE = /^\d{1,10}$/;

/** Parses `prompt` and `max_age` (§3.1.2.1); malformed values are `invalid_request`. */
export function parseAuthenticationParams(params: Params): AuthenticationParams {
  const rawPrompt = single(params, 'prompt');
  const prompt = [...new Set(rawPrompt?.split(' ').filter(Boolean) ?? [])];
  for (const p of prompt) {
    if (!(PROMPT_VALUES as readonly string[]).includes(p)) throw invalidRequest(`unsupported prompt value: ${p}`);
  }
  // §3.1.2.1: "If this parameter contains none with any other value, an error is returned."
  if (prompt.includes('none') && prompt.length > 1) throw invalidRequest('prompt=none cannot be combined with other values');
  const rawMaxAge = single(params, 'max_age');
  if (rawMaxAge !== undefined && !MAX_AGE.test(rawMaxAge)) throw invalidRequest('max_age must be a non-negative integer');
  const acrValues = single(params, 'acr_values')?.split(' ').filter(Boolean);
  if (acrValues && acrValues.length > 16) throw invalidRequest('too many acr_values');
  return { prompt: prompt as Prompt[], maxAge: rawMaxAge === undefined ? undefined : Number(rawMaxAge), ...(acrValues?.length ? { acrValues } : {}) };
}

/** Marks the authorization request's return after a sign-in asked for by `acr_values`. */
export const ACR_ATTEMPT = 'gh_acr_attempt';

export type AuthorizationStep =
  /** `stepUp`: the session is fine but below `acr_values`; only the missing factor need be asked for. */
  | { next: 'login'; stepUp?: true }
  | { next: 'consent' }
  | { next: 'approve' }
  | { next: 'error'; error: GatehouseError };

/**
 * What the authorization endpoint does next for a person (§3.1.2.3,
 * §3.1.2.4): sign in (none yet, `prompt=login`, or the sign-in is older than
 * `max_age`), ask for consent (not granted yet, or `prompt=consent`), or
 * answer. With `prompt=none` anything that needs the person is an error
 * returned to the client (§3.1.2.6).
 */
export async function authorizationStep(
  req: AuthenticationParams,
  session: { authTime: number; amr?: string[] } | undefined,
  now: number,
  consentNeeded: () => Promise<boolean>,
  /** The person has just signed in again for this request's `acr_values` (afterReauthentication). */
  acrAttempted = false,
): Promise<AuthorizationStep> {
  const silent = req.prompt.includes('none');
  // max_age=0 asks for a sign-in now, whatever the clock's resolution says about "older than".
  const stale = session !== undefined && req.maxAge !== undefined && (req.maxAge === 0 || now - session.authTime > req.maxAge * 1000);
  if (!session || stale || req.prompt.includes('login')) {
    return silent ? { next: 'error', error: new GatehouseError('login_required', 'the user must sign in') } : { next: 'login' };
  }
  if (req.acrValues && !meetsAcr(acrFor(session.amr), req.acrValues)) {
    // Unknown levels only, a sign-in already tried, or no page allowed: the level cannot be had here
    // (OpenID Connect Core 1.0 errata set 2, §3.1.2.6; RFC 9470 §4).
    const unreachable = !req.acrValues.some((v) => acrRank(v) >= 0);
    if (silent || acrAttempted || unreachable) return { next: 'error', error: new GatehouseError('unmet_authentication_requirements', 'the requested authentication level cannot be met') };
    return { next: 'login', stepUp: true };
  }
  if (req.prompt.includes('consent') || (await consentNeeded())) {
    return silent ? { next: 'error', error: new GatehouseError('consent_required', 'the user must approve this application') } : { next: 'consent' };
  }
  return { next: 'approve' };
}

/**
 * The authorization request to come back to after a forced sign-in: without
 * `prompt=login` and `max_age`, which the fresh sign-in has just satisfied
 * (kept, they would send the person to the login page again and again). The
 * ID token's `auth_time` still tells the client when that was (§3.1.2.1).
 */
export function afterReauthentication(pathAndQuery: string, acrAttempt = false): string {
  const u = new URL(pathAndQuery, 'http://gatehouse.invalid');
  // A sign-in for `acr_values` is offered once; coming back still below the level is unmet_authentication_requirements.
  if (acrAttempt) u.searchParams.set(ACR_ATTEMPT, '1');
  const prompt = (u.searchParams.get('prompt') ?? '').split(' ').filter((p) => p && p !== 'login');
  u.searchParams.delete('prompt');
  u.searchParams.delete('max_age');
  if (prompt.length) u.searchParams.set('prompt', prompt.join(' '));
  return `${u.pathname}${u.search}`;
}
