import { insufficientScope } from './errors.js';

/** Scopes a route needs: every one of `all`, and at least one of `any`. */
export interface ScopeRule {
  all?: readonly string[];
  any?: readonly string[];
}

/** Accepts `"a b"`, `["a", "b"]` or a full rule. */
export function scopeRule(spec: string | readonly string[] | ScopeRule | undefined): ScopeRule {
  if (spec === undefined) return {};
  if (typeof spec === 'string') return { all: spec.split(' ').filter(Boolean) };
  if (Array.isArray(spec)) return { all: spec as readonly string[] };
  return spec as ScopeRule;
}

/** Throws 403 `insufficient_scope` naming what would have been enough (RFC 6750 §3.1). */
export function requireScope(granted: readonly string[], rule: ScopeRule): void {
  const have = new Set(granted);
  const missing = (rule.all ?? []).filter((s) => !have.has(s));
  const anyOk = !rule.any?.length || rule.any.some((s) => have.has(s));
  if (missing.length === 0 && anyOk) return;
  // For "any of", name the first alternative: the attribute lists scopes that are all needed.
  throw insufficientScope([...(rule.all ?? []), ...(anyOk ? [] : [rule.any![0]!])]);
}
