import { invalidScope } from './errors.js';

/** RFC 6749 §3.3 scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Parses a requested scope. RFC 6749 §3.3 separates with spaces; some
 * clients send commas (docs/oauth.md, Endpoints), so both are accepted (a comma is not a legal
 * scope-token character, so this is unambiguous).
 */
export function parseScope(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  const parts = raw.split(/[ ,]+/).filter(Boolean);
  for (const p of parts) {
    if (!SCOPE_TOKEN.test(p)) throw invalidScope(`malformed scope value`);
  }
  return [...new Set(parts)];
}

export function formatScope(scopes: readonly string[]): string {
  return scopes.join(' ');
}

export function isSubset(requested: readonly string[], allowed: readonly string[]): boolean {
  const set = new Set(allowed);
  return requested.every((s) => set.has(s));
}

/**
 * Resolves the scope of a request against what the client may have: an empty
 * request gets the client's registered scope (RFC 6749 §3.3 "default value"),
 * anything outside it is `invalid_scope`.
 */
export function resolveScope(raw: string | undefined, allowed: readonly string[]): string[] {
  const requested = parseScope(raw);
  if (requested.length === 0) return [...allowed];
  const outside = requested.filter((s) => !allowed.includes(s));
  if (outside.length) throw invalidScope(`scope not allowed for this client: ${outside.join(' ')}`);
  return requested;
}
