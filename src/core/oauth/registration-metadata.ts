import { z } from 'zod';
import { GatehouseError, invalidClientMetadata, invalidRedirectUri } from '../errors.js';
import type { ClientAuthMethod, IdTokenAlg } from '../model.js';
import { parseScope } from '../scope.js';
import { currentClientOptions } from './client-options.js';
import { CIBA_GRANT_TYPE } from './ciba-options.js';
import { checkClientName } from './client-name.js';
import { isLoopback, redirectUriProblem } from './redirect-uri.js';

/**
 * The client metadata of dynamic registration (RFC 7591 §2), checked by one
 * zod schema for registration and for RFC 7592 updates. Unknown fields are
 * ignored (§2: "MUST ignore any client metadata … that it does not
 * understand"); a problem with `redirect_uris` is `invalid_redirect_uri`,
 * any other `invalid_client_metadata` (§3.2.2).
 *
 * Refused on purpose (docs/security.md): the implicit and password grants
 * (RFC 9700 §2.1.2, §2.4), authentication methods other than those below
 * (certificate clients are registered by an operator), and
 * `software_statement`: nothing vouches for statements here, so one is
 * answered `unapproved_software_statement` rather than silently ignored.
 */

/** Token endpoint authentication methods a client may register for itself. */
export const REGISTRABLE_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt', 'none'] as const;
/**
 * Grants dynamic clients never get, whatever the token endpoint serves, and
 * why. CIBA puts a prompt into a person's chat on the client's word alone
 * (no browser, no session): only clients an operator registers may send them.
 */
const REFUSED_GRANTS = new Map([
  ['password', 'is not offered to dynamically registered clients (RFC 9700)'],
  ['implicit', 'is not offered to dynamically registered clients (RFC 9700)'],
  [CIBA_GRANT_TYPE, 'is granted only to clients the operator registers (command line, console, admin API)'],
]);

const MAX_URI = 2000;

/** RFC 7591 §2 human-facing URLs (logo_uri, client_uri, policy_uri, tos_uri, jwks_uri): https, or loopback http for development. */
function webUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_URI || /[\x00-\x20\x7f]/.test(uri)) return 'must be a URL of at most 2000 characters without spaces';
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'must be an absolute https URL';
  }
  if (u.protocol !== 'https:' && !isLoopback(u)) return 'must be an https URL (http only for loopback)';
  if (u.username || u.password) return 'must not contain credentials';
  return undefined;
}

const webUri = z.string().superRefine((uri, ctx) => {
  const problem = webUriProblem(uri);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** The one client-name check (client-name.ts); the name is kept trimmed. */
const clientName = z.unknown().transform((raw, ctx) => {
  const checked = checkClientName(raw);
  if ('name' in checked) return checked.name;
  ctx.addIssue({ code: 'custom', message: checked.problem });
  return z.NEVER;
});

const metadataShape = {
  redirect_uris: z.array(z.string()).max(20, 'at most 20 redirect URIs').optional(),
  token_endpoint_auth_method: z.enum(REGISTRABLE_AUTH_METHODS, { error: `must be one of ${REGISTRABLE_AUTH_METHODS.join(', ')}` }).optional(),
  grant_types: z.array(z.string().max(200)).min(1, 'must name at least one grant type').max(10).optional(),
  response_types: z.array(z.string().max(100)).max(5).optional(),
  client_name: clientName.optional(),
  scope: z.string().max(1000, 'at most 1000 characters').optional(),
  contacts: z.array(z.string().max(254).regex(EMAIL, 'must be e-mail addresses')).max(10, 'at most 10 contacts').optional(),
  logo_uri: webUri.optional(),
  client_uri: webUri.optional(),
  policy_uri: webUri.optional(),
  tos_uri: webUri.optional(),
  jwks_uri: webUri.optional(),
  jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }, { error: 'must be a JWK Set object' }).optional(),
  software_id: z.string().min(1).max(200).optional(),
  software_version: z.string().min(1).max(200).optional(),
  id_token_signed_response_alg: z.enum(['ES256', 'RS256'], { error: 'must be ES256 or RS256' }).optional(),
  require_pushed_authorization_requests: z.boolean({ error: 'must be a boolean' }).optional(),
  post_logout_redirect_uris: z.array(z.string()).max(20).optional(),
  backchannel_logout_uri: z.string().max(MAX_URI).optional(),
  // RFC 7592 §2.2: an update names the client it replaces.
  client_id: z.string().max(200).optional(),
  client_secret: z.string().max(500).optional(),
};

const metadataSchema = z.object(metadataShape, { error: 'the body must be a JSON object' });
type Raw = z.output<typeof metadataSchema>;

/** What registration keeps: the client's settings, and the descriptive fields kept only to show back (RFC 7592 reads). */
export interface ClientMetadata {
  name: string;
  redirectUris: string[];
  grantTypes: string[];
  responseTypes: string[];
  authMethod: ClientAuthMethod;
  scope: string;
  jwks?: string;
  jwksUri?: string;
  /** Always set: RS256 unless the client asked for ES256 (Dynamic Registration §2). */
  idTokenAlg: IdTokenAlg;
  requirePar: boolean;
  postLogoutRedirectUris: string[];
  backchannelLogoutUri: string | null;
  /** Descriptive metadata, as registered (client_name, contacts, logo_uri, …). */
  extras: Record<string, unknown>;
  clientId?: string;
  clientSecret?: string;
}

const EXTRA_FIELDS = ['client_name', 'contacts', 'logo_uri', 'client_uri', 'policy_uri', 'tos_uri', 'software_id', 'software_version'] as const;

function fail(field: string, message: string): never {
  const text = `${field}: ${message}`.slice(0, 300);
  throw field.split('.')[0] === 'redirect_uris' ? invalidRedirectUri(text) : invalidClientMetadata(text);
}

/** Derives the §2.1 pair when one side is omitted; both omitted: a code-flow client. */
function grantsAndResponses(raw: Raw): { grantTypes: string[]; responseTypes: string[] } {
  const grants = raw.grant_types ? [...new Set(raw.grant_types)] : undefined;
  const responses = raw.response_types ? [...new Set(raw.response_types)] : undefined;
  const grantTypes = grants ?? (responses && !responses.includes('code') ? [] : ['authorization_code']);
  const responseTypes = responses ?? (grantTypes.includes('authorization_code') ? ['code'] : []);
  return { grantTypes, responseTypes };
}

/**
 * Parses and checks registration metadata. `servedGrants` are the grant
 * types the token endpoint serves (extension grants included).
 */
export function parseClientMetadata(body: unknown, servedGrants: readonly string[]): ClientMetadata {
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && 'software_statement' in body) {
    throw new GatehouseError('unapproved_software_statement', 'software statements are not accepted by this server; register the metadata itself');
  }
  const parsed = metadataSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    fail(issue.path.length ? issue.path.map(String).join('.') : 'metadata', issue.message);
  }
  const raw = parsed.data;
  const redirectUris = [...new Set(raw.redirect_uris ?? [])];
  // One implementation of the redirect URI rules (src/core/oauth/redirect-uri.ts): as for clients an operator registers.
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri, null);
    if (problem) fail('redirect_uris', problem);
  }
  const { grantTypes, responseTypes } = grantsAndResponses(raw);
  for (const g of grantTypes) {
    const refusal = REFUSED_GRANTS.get(g);
    if (refusal) fail('grant_types', `${g} ${refusal}`);
    if (!servedGrants.includes(g)) fail('grant_types', `unsupported grant type ${g}`);
  }
  for (const r of responseTypes) if (r !== 'code') fail('response_types', `unsupported response type ${r} (only code)`);
  // RFC 7591 §2.1: the two lists must agree.
  if (grantTypes.includes('authorization_code') !== responseTypes.includes('code')) {
    fail('response_types', 'the authorization_code grant goes with response type code, and only with it (RFC 7591 §2.1)');
  }
  if (grantTypes.includes('authorization_code') && redirectUris.length === 0) fail('redirect_uris', 'at least one redirect URI is required for the authorization_code grant');
  const authMethod: ClientAuthMethod = raw.token_endpoint_auth_method ?? 'client_secret_basic';
  if (authMethod === 'none' && grantTypes.includes('client_credentials')) fail('grant_types', 'a public client (token_endpoint_auth_method none) cannot use client_credentials');
  let scope = defaultScope(grantTypes);
  if (raw.scope !== undefined) {
    try {
      scope = parseScope(raw.scope).join(' ');
    } catch {
      fail('scope', 'malformed scope');
    }
    if (!scope) fail('scope', 'must name at least one scope');
  }
  const jwks = raw.jwks ? JSON.stringify(raw.jwks) : undefined;
  // The same checks as `client create --jwks/--jwks-uri` (src/core/oauth/client-options.ts).
  // OpenID Connect Dynamic Registration §2: without id_token_signed_response_alg, ID tokens are RS256.
  const idTokenAlg = raw.id_token_signed_response_alg ?? 'RS256';
  const current = currentClientOptions({ jwks, jwksUri: raw.jwks_uri, idTokenAlg, requirePar: raw.require_pushed_authorization_requests }, authMethod);
  if (typeof current === 'string') fail(raw.jwks_uri ? 'jwks_uri' : 'jwks', current);
  const postLogoutRedirectUris = [...new Set(raw.post_logout_redirect_uris ?? [])];
  for (const uri of postLogoutRedirectUris) {
    const problem = redirectUriProblem(uri, null);
    if (problem) fail('post_logout_redirect_uris', problem);
  }
  const backchannelLogoutUri = raw.backchannel_logout_uri ?? null;
  if (backchannelLogoutUri !== null) {
    const problem = webUriProblem(backchannelLogoutUri);
    if (problem || backchannelLogoutUri.includes('#')) fail('backchannel_logout_uri', problem ?? 'must not contain a fragment');
  }
  const extras: Record<string, unknown> = {};
  for (const f of EXTRA_FIELDS) if (raw[f] !== undefined) extras[f] = raw[f];
  return {
    name: raw.client_name ?? defaultName(redirectUris),
    redirectUris, grantTypes, responseTypes, authMethod, scope,
    ...(current.jwks ? { jwks: current.jwks } : {}),
    ...(current.jwksUri ? { jwksUri: current.jwksUri } : {}),
    idTokenAlg,
    requirePar: current.requirePar === true,
    postLogoutRedirectUris, backchannelLogoutUri, extras,
    ...(raw.client_id !== undefined ? { clientId: raw.client_id } : {}),
    ...(raw.client_secret !== undefined ? { clientSecret: raw.client_secret } : {}),
  };
}

/**
 * RFC 7591 §2 lets the server pick the scope of a client that registers none:
 * the built-in API's `user` and the standard OpenID Connect scopes (Core §5.4,
 * §11), `offline_access` only for a client that may refresh (Core §11).
 */
function defaultScope(grantTypes: readonly string[]): string {
  return ['user', 'openid', 'profile', 'email', ...(grantTypes.includes('refresh_token') ? ['offline_access'] : [])].join(' ');
}

/** The consent page names the app; without client_name, where it sends people back. */
function defaultName(redirectUris: readonly string[]): string {
  try {
    return redirectUris[0] ? new URL(redirectUris[0]).host || 'Unnamed application' : 'Unnamed application';
  } catch {
    return 'Unnamed application';
  }
}
