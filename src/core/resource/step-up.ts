import { GatehouseError, insufficientScope } from '../errors.js';
import { acrRank } from '../oidc/acr.js';
import type { VerifiedToken } from './token.js';

/**
 * Step-up on the resource side (RFC 9470): the lowest acceptable
 * authentication level (`acr`, one of Gatehouse's `acr_values_supported` or
 * another server's own value, then matched exactly) and how long ago the
 * person may have authenticated (`maxAge`, seconds since `auth_time`).
 */
export interface StepUpRule {
  acr?: string;
  maxAge?: number;
}

/** RFC 9470 §3: 401 `insufficient_user_authentication`, the challenge naming what would be enough. */
export function insufficientUserAuthentication(description: string, rule: StepUpRule): GatehouseError {
  return new GatehouseError('insufficient_user_authentication', description, {
    challenge: { scheme: 'Bearer', ...(rule.acr ? { acrValues: rule.acr } : {}), ...(rule.maxAge !== undefined ? { maxAge: rule.maxAge } : {}) },
  });
}

/** Throws `insufficient_user_authentication` when the token's `acr` or `auth_time` does not satisfy the rule. */
export function requireAuthentication(token: VerifiedToken, rule: StepUpRule, now: number): void {
  if (rule.acr !== undefined) {
    const wanted = acrRank(rule.acr);
    const ok = token.acr !== undefined && (wanted >= 0 ? acrRank(token.acr) >= wanted : token.acr === rule.acr);
    if (!ok) throw insufficientUserAuthentication('a stronger authentication level is needed', rule);
  }
  if (rule.maxAge !== undefined) {
    // RFC 9470 §3: no auth_time, or one too long ago, is answered the same way.
    const fresh = token.authTime !== undefined && now - token.authTime * 1000 <= rule.maxAge * 1000;
    if (!fresh) throw insufficientUserAuthentication('a more recent authentication is needed', rule);
  }
}

/**
 * `requireRole` / `requireGroup`: 403 `insufficient_scope` (RFC 6750 §3.1).
 * A token without the claim at all names the scope that releases it; one
 * that carries the claim without the name says only what is missing.
 */
export function requireMembership(token: VerifiedToken, claim: 'roles' | 'groups', name: string): void {
  const values = token[claim];
  if (values === undefined) throw insufficientScope([claim]);
  if (!values.includes(name)) {
    throw new GatehouseError('insufficient_scope', `this needs the ${claim === 'roles' ? 'role' : 'group'} ${name}`);
  }
}
