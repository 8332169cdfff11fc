import { invalidTarget } from '../errors.js';
import type { Client } from '../model.js';
import type { Params } from '../params.js';

/**
 * Resource indicators (RFC 8707). A client names the protected resources it
 * wants a token for with `resource` (repeatable) at the authorization and
 * token endpoints; the token's `aud` is then those resources.
 *
 * What may be asked for is the allowed set: the built-in resource server
 * ({api_url}, the default audience) and the URIs registered for the client
 * (`client create --resource`, `Client.resources`). Dynamically registered
 * clients cannot register resources: the set stays the operator's choice, so
 * a self-registered client cannot obtain tokens for an API the operator never
 * named. Anything else is `invalid_target` (§2).
 *
 * URIs are compared after WHATWG URL normalisation (`http://h:1` and
 * `http://h:1/` are one resource), and the token names the allowed entry as it
 * was configured, so resource servers can compare `aud` as a plain string.
 */
export const RESOURCE_PARAM = 'resource';

/** Longest resource URI accepted (it travels in tokens and URLs). */
const MAX_RESOURCE_LENGTH = 2000;
/** At most this many resources per request. */
const MAX_RESOURCES = 10;

function canonical(uri: string): string | undefined {
  try {
    return new URL(uri).href;
  } catch {
    return undefined;
  }
}

/**
 * §2: an absolute URI without a fragment (it SHOULD NOT have a query either,
 * which is not refused: some APIs are named that way). Returns why it is not.
 */
export function resourceProblem(uri: string): string | undefined {
  if (uri.length === 0 || uri.length > MAX_RESOURCE_LENGTH) return 'resource must be an absolute URI of at most 2000 characters';
  if (/[\x00-\x20\x7f]/.test(uri)) return 'resource must not contain spaces or control characters';
  if (uri.includes('#')) return 'resource must not contain a fragment (RFC 8707 §2)';
  const u = canonical(uri);
  if (!u) return 'resource must be an absolute URI (RFC 8707 §2)';
  const parsed = new URL(u);
  if (parsed.username || parsed.password) return 'resource must not contain credentials';
  return undefined;
}

/** The `resource` values of a request (none: an empty list); malformed ones are `invalid_target`. */
export function requestedResources(params: Params, name = RESOURCE_PARAM): string[] {
  const raw = params[name];
  if (raw === undefined) return [];
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length > MAX_RESOURCES) throw invalidTarget(`at most ${MAX_RESOURCES} ${name} values`);
  for (const r of list) {
    const problem = resourceProblem(r);
    if (problem) throw invalidTarget(name === RESOURCE_PARAM ? problem : problem.replace(/^resource/, name));
  }
  return [...new Set(list)];
}

/** The resources a client may ask tokens for: the built-in API, then its own. */
export function allowedResources(client: Pick<Client, 'resources'>, defaultAudience: string): string[] {
  return [...new Set([defaultAudience, ...(client.resources ?? [])])];
}

/**
 * Maps each requested resource onto the entry of `allowed` it names (compared
 * normalised), or throws `invalid_target`. An empty request gives `undefined`:
 * the caller decides the default.
 */
export function resolveResources(requested: readonly string[], allowed: readonly string[]): string[] | undefined {
  if (requested.length === 0) return undefined;
  const byCanonical = new Map(allowed.map((a) => [canonical(a) ?? a, a]));
  return [...new Set(requested.map((r) => {
    const hit = byCanonical.get(canonical(r) ?? r);
    if (!hit) throw invalidTarget(`resource ${r} is not one this client may get tokens for`);
    return hit;
  }))];
}

/**
 * RFC 8707 §2.2 at the token endpoint for a grant (a code, a refresh token):
 * when the authorization request named resources, they apply to the whole
 * grant, so a token request may name some of them (a narrower audience) but
 * no other; naming none gives all of them. A grant that named none leaves
 * the request's own resources (already checked against the allowed set).
 */
export function grantAudience(requested: readonly string[], granted: readonly string[] | undefined): string[] | undefined {
  if (!granted?.length) return requested.length ? [...requested] : undefined;
  if (requested.length === 0) return [...granted];
  const outside = requested.filter((r) => !granted.includes(r));
  if (outside.length) throw invalidTarget(`resource ${outside[0]} was not part of the authorization grant`);
  return [...requested];
}

/** RFC 7519 §4.1.3: one audience as a string, several as an array. */
export function audienceClaim(audience: readonly string[] | undefined, fallback: string): string | string[] {
  if (!audience || audience.length === 0) return fallback;
  return audience.length === 1 ? audience[0]! : [...audience];
}

/** Validates the resources an administrator registers for a client; returns what is wrong. */
export function registeredResourcesProblem(resources: readonly string[]): string | undefined {
  if (resources.length > 20) return 'at most 20 resources per client';
  for (const r of resources) {
    const problem = resourceProblem(r);
    if (problem) return `${problem}: ${r}`;
  }
  return undefined;
}
