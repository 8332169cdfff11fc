import type { SignInStore } from './ports.js';

/**
 * Authentication levels (issue 28 item 3; shared/INTERFACE.md, "Roles,
 * groups, claims and step-up"). A session records how the person proved who
 * they are as RFC 8176 method values (`amr`); its level (`acr`) follows:
 * a passkey is phishing-resistant, any two factors are `mfa`, else password.
 */
export const ACR_PASSWORD = 'urn:gatehouse:acr:password';
export const ACR_MFA = 'urn:gatehouse:acr:mfa';
export const ACR_PHISHING_RESISTANT = 'urn:gatehouse:acr:phishing-resistant';

/** Lowest first; discovery's `acr_values_supported` lists them in this order. */
export const ACR_LEVELS: readonly string[] = [ACR_PASSWORD, ACR_MFA, ACR_PHISHING_RESISTANT];

/** RFC 8176 §2 values Gatehouse records: password, one-time code, passkey, a tap in the linked chat, a third party. */
export type AuthMethod = 'pwd' | 'otp' | 'hwk' | 'swk' | 'mca' | 'fed';

const PASSKEY = new Set(['hwk', 'swk']);

/** The level a set of methods reaches; a session from before 0033 (no methods recorded) counts as password. */
export function acrFor(amr: readonly string[] | undefined): string {
  const methods = amr ?? [];
  if (methods.some((m) => PASSKEY.has(m))) return ACR_PHISHING_RESISTANT;
  return new Set(methods).size >= 2 ? ACR_MFA : ACR_PASSWORD;
}

/** `amr` as ID tokens carry it: the methods, and `mfa` (RFC 8176 §2) when two of them were used. */
export function amrClaim(amr: readonly string[] | undefined): string[] {
  const methods = [...new Set(amr ?? [])];
  return methods.length >= 2 ? [...methods, 'mfa'] : methods;
}

/** Rank of a level; -1 for a value Gatehouse does not know. */
export function acrRank(acr: string | undefined): number {
  return acr === undefined ? -1 : ACR_LEVELS.indexOf(acr);
}

/**
 * Whether `acr` satisfies a request of `acrValues` (treated as required, as
 * RFC 9470 §4 wants): the lowest known level asked for, or any higher one.
 * Unknown values alone can never be met.
 */
export function meetsAcr(acr: string, acrValues: readonly string[]): boolean {
  const known = acrValues.map(acrRank).filter((r) => r >= 0);
  if (known.length === 0) return acrValues.length === 0;
  return acrRank(acr) >= Math.min(...known);
}

export const encodeAmr = (amr: readonly string[] | undefined): string | null => (amr?.length ? amr.join(' ') : null);
export const decodeAmr = (s: string | null | undefined): string[] | undefined => (s ? s.split(' ').filter(Boolean) : undefined);

/**
 * RFC 9470 §6: `acr` and `auth_time` of the sign-in a token family started
 * from (the code grant and its refreshes), for JWT access tokens and
 * introspection; nothing for grants without a sign-in (client credentials).
 */
export async function levelClaims(signIns: Pick<SignInStore, 'byFamily'>, familyId: string | null | undefined): Promise<{ acr?: string; auth_time?: number }> {
  if (!familyId) return {};
  const signIn = await signIns.byFamily(familyId);
  return signIn ? { acr: acrFor(signIn.amr), auth_time: Math.floor(signIn.authTime / 1000) } : {};
}
