import { readFileSync } from 'node:fs';

/**
 * Third-party login providers (Gatehouse as an OAuth client of someone else's
 * authorization server). Configured as JSON, in GATEHOUSE_PROVIDERS_FILE
 * and/or GATEHOUSE_PROVIDERS: an array of providers, or `{ "providers": [...] }`.
 * A secret may stay out of the file: GATEHOUSE_PROVIDER_<ID>_CLIENT_SECRET.
 *
 *   { "id": "corp", "name": "Corp", "type": "oidc", "issuer": "https://id.corp.example",
 *     "client_id": "…", "client_secret": "…", "scopes": ["openid", "profile", "email"],
 *     "claims": { "subject": "sub", "username": "preferred_username", "email": "email", "name": "name" } }
 *
 * Types: `oidc` (endpoints from the issuer's discovery document, ID token
 * checked), `oauth2` (authorization_endpoint, token_endpoint,
 * userinfo_endpoint given), `github` (GitHub-shaped: `{base_url}/login/oauth/…`
 * and `{api_url}/user`).
 */

export type ProviderType = 'oidc' | 'oauth2' | 'github';

/** Which claim (a name, or a dotted path) of the provider's user info fills each field of the local account. */
export interface ClaimMapping {
  subject: string;
  username: string;
  email: string;
  name: string;
}

export interface Provider {
  id: string;
  /** Shown on the button: "Sign in with <name>". */
  name: string;
  type: ProviderType;
  clientId: string;
  clientSecret: string | undefined;
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  scopes: string[];
  claims: ClaimMapping;
  /**
   * `oidc`: required. Otherwise the `iss` expected in authorization responses
   * (RFC 9207) when the provider sends one; `github` defaults it to `base_url`.
   */
  issuer: string | undefined;
  /** Fixed endpoints (`oauth2`, `github`); `oidc` discovers them. */
  authorizationEndpoint: string | undefined;
  tokenEndpoint: string | undefined;
  userinfoEndpoint: string | undefined;
}

const ID = /^[a-z0-9][a-z0-9_-]{0,31}$/;

const DEFAULT_CLAIMS: Record<ProviderType, ClaimMapping> = {
  oidc: { subject: 'sub', username: 'preferred_username', email: 'email', name: 'name' },
  oauth2: { subject: 'sub', username: 'preferred_username', email: 'email', name: 'name' },
  // GitHub's /user: a numeric id that never changes, and a login that may.
  github: { subject: 'id', username: 'login', email: 'email', name: 'name' },
};

const DEFAULT_SCOPES: Record<ProviderType, string[]> = {
  oidc: ['openid', 'profile', 'email'],
  oauth2: [],
  github: ['read:user', 'user:email'],
};

type Source = Record<string, string | undefined>;

/**
 * An endpoint we send secrets and codes to: https, or http on a loopback
 * address (development, tests). Returned without a trailing slash.
 */
function endpoint(value: unknown, where: string): string {
  if (typeof value !== 'string' || !value) throw new Error(`${where} must be a URL`);
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new Error(`${where} must be a URL, got "${value}"`);
  }
  const loopback = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i.test(u.hostname);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && loopback)) throw new Error(`${where} must be https (http only on loopback), got "${value}"`);
  if (u.hash || u.username || u.password) throw new Error(`${where} must not carry a fragment or credentials`);
  return value.replace(/\/+$/, '');
}

function text(value: unknown, where: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new Error(`${where} must be a string`);
  return value.trim() || undefined;
}

function scopes(value: unknown, where: string): string[] | undefined {
  if (value === undefined) return undefined;
  const list = typeof value === 'string' ? value.split(/[\s,]+/) : value;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]*$/.test(s))) {
    throw new Error(`${where} must be a list of scope names`);
  }
  return (list as string[]).filter(Boolean);
}

function claimMapping(value: unknown, defaults: ClaimMapping, where: string): ClaimMapping {
  if (value === undefined) return defaults;
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where} must be an object`);
  const out = { ...defaults };
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (!Object.hasOwn(defaults, k)) throw new Error(`${where}.${k}: unknown field (use subject, username, email, name)`);
    if (typeof v !== 'string' || !v) throw new Error(`${where}.${k} must be a claim name`);
    out[k as keyof ClaimMapping] = v;
  }
  return out;
}

/** The environment variable that may hold a provider's client secret. */
export const secretVariable = (id: string) => `GATEHOUSE_PROVIDER_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_CLIENT_SECRET`;

/** One provider from its JSON object; throws an Error naming the bad field. */
export function parseProvider(raw: unknown, env: Source, where: string): Provider {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${where} must be an object`);
  const r = raw as Record<string, unknown>;
  const id = text(r.id, `${where}.id`);
  if (!id || !ID.test(id)) throw new Error(`${where}.id must be 1–32 lower-case letters, digits, - or _`);
  const at = `provider "${id}"`;
  const type = (text(r.type, `${at}: type`) ?? 'oauth2') as ProviderType;
  if (!['oidc', 'oauth2', 'github'].includes(type)) throw new Error(`${at}: type must be oidc, oauth2 or github`);
  const clientId = text(r.client_id, `${at}: client_id`);
  if (!clientId) throw new Error(`${at}: client_id is required`);
  const tokenEndpointAuthMethod = (text(r.token_endpoint_auth_method, `${at}: token_endpoint_auth_method`)
    ?? (type === 'github' ? 'client_secret_post' : 'client_secret_basic')) as Provider['tokenEndpointAuthMethod'];
  if (!['client_secret_basic', 'client_secret_post', 'none'].includes(tokenEndpointAuthMethod)) {
    throw new Error(`${at}: token_endpoint_auth_method must be client_secret_basic, client_secret_post or none`);
  }
  const clientSecret = env[secretVariable(id)] || text(r.client_secret, `${at}: client_secret`);
  if (!clientSecret && tokenEndpointAuthMethod !== 'none') throw new Error(`${at}: client_secret is required (or ${secretVariable(id)})`);
  let issuer = r.issuer === undefined ? undefined : endpoint(r.issuer, `${at}: issuer`);
  let authorizationEndpoint: string | undefined;
  let tokenEndpoint: string | undefined;
  let userinfoEndpoint: string | undefined;
  if (type === 'oidc') {
    if (!issuer) throw new Error(`${at}: issuer is required for type oidc`);
  } else if (type === 'github') {
    const base = endpoint(r.base_url ?? 'https://github.com', `${at}: base_url`);
    const api = endpoint(r.api_url ?? 'https://api.github.com', `${at}: api_url`);
    authorizationEndpoint = `${base}/login/oauth/authorize`;
    tokenEndpoint = `${base}/login/oauth/access_token`;
    userinfoEndpoint = `${api}/user`;
    // GitHub sends no `iss`; a GitHub-shaped server that does (another Gatehouse) names its base URL.
    issuer ??= base;
  } else {
    authorizationEndpoint = endpoint(r.authorization_endpoint, `${at}: authorization_endpoint`);
    tokenEndpoint = endpoint(r.token_endpoint, `${at}: token_endpoint`);
    userinfoEndpoint = endpoint(r.userinfo_endpoint, `${at}: userinfo_endpoint`);
  }
  return {
    id,
    name: text(r.name, `${at}: name`) ?? id,
    type,
    clientId,
    clientSecret,
    tokenEndpointAuthMethod,
    scopes: scopes(r.scopes, `${at}: scopes`) ?? DEFAULT_SCOPES[type],
    claims: claimMapping(r.claims, DEFAULT_CLAIMS[type], `${at}: claims`),
    issuer,
    authorizationEndpoint,
    tokenEndpoint,
    userinfoEndpoint,
  };
}

function parseList(json: string, env: Source, source: string): Provider[] {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (e) {
    throw new Error(`${source} is not JSON: ${(e as Error).message}`);
  }
  const list = Array.isArray(doc) ? doc : (doc as { providers?: unknown } | null)?.providers;
  if (!Array.isArray(list)) throw new Error(`${source} must be an array of providers or { "providers": [...] }`);
  return list.map((p, i) => parseProvider(p, env, `${source}[${i}]`));
}

/**
 * Every configured provider, from GATEHOUSE_PROVIDERS_FILE (a path) and
 * GATEHOUSE_PROVIDERS (inline JSON). `fail` turns a problem into the
 * caller's configuration error.
 */
export function loadProviders(src: Source, fail: (message: string) => Error): Provider[] {
  const out: Provider[] = [];
  try {
    const file = src.GATEHOUSE_PROVIDERS_FILE;
    if (file) {
      let json: string;
      try {
        json = readFileSync(file, 'utf8');
      } catch (e) {
        throw new Error(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
      }
      out.push(...parseList(json, src, file));
    }
    if (src.GATEHOUSE_PROVIDERS) out.push(...parseList(src.GATEHOUSE_PROVIDERS, src, 'GATEHOUSE_PROVIDERS'));
    const seen = new Set<string>();
    for (const p of out) {
      if (seen.has(p.id)) throw new Error(`provider id "${p.id}" is configured twice`);
      seen.add(p.id);
    }
  } catch (e) {
    throw fail(`third-party login providers: ${(e as Error).message}`);
  }
  return out;
}
