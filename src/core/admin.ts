import { randomUUID } from 'node:crypto';
import { invalidRequest, notFound } from './errors.js';
import { randomToken, sha256 } from './crypto.js';
import { GRANT_TYPES, type Client, type ClientAuthMethod, type TokenFormat, type User } from './model.js';
import type { Clock, PasswordHasher, Storage, Stores, Transactional } from './ports.js';
import { rfc3339 } from './notify/events.js';
import { recordEvent } from './notify/record.js';
import { parseScope } from './scope.js';
import { domainHost, redirectUriProblem } from './oauth/redirect-uri.js';
import { clientAccess, hasTlsCertificate } from './client-access.js';
import { currentClientOptions, type CurrentClientInput } from './oauth/client-options.js';
import { registeredResourcesProblem } from './oauth/resource-indicators.js';
import { checkClientName } from './oauth/client-name.js';


export interface ClientInput extends CurrentClientInput {
  name: string;
  redirectUris: string[];
  grantTypes?: string[];
  scope?: string;
  public?: boolean;
  authMethod?: string;
  trusted?: boolean;
  introspect?: boolean;
  domain?: string | null;
  tokenFormat?: string;
  /** RFC 8705 certificate (PEM) or thumbprint, and the address allow-list (docs/oauth.md, Application-level access): see client-access.ts. */
  tlsClientCertificate?: string;
  tlsClientCertificateThumbprint?: string;
  allowedAddresses?: string[];
  /** OpenID Connect RP-initiated logout: exact URIs the end-session endpoint may return to. */
  postLogoutRedirectUris?: string[];
  /** OpenID Connect Back-Channel Logout 1.0 §2.2: where logout tokens are POSTed. */
  backchannelLogoutUri?: string | null;
  /** RFC 8707: resources it may ask tokens for beside the built-in API (src/core/oauth/resource-indicators.ts). */
  resources?: string[];
}

export interface CreatedClient {
  client: Client;
  /** Shown once; only its hash is stored. */
  secret: string | undefined;
}

const AUTH_METHODS: readonly ClientAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'none', 'self_signed_tls_client_auth', 'private_key_jwt', 'client_secret_jwt'];
/** Redirect-based grants need at least one redirect URI. */
const REDIRECTING = ['authorization_code', 'implicit'];
/** Extension grants are named by absolute URIs (RFC 6749 §4.5). */
const isExtensionGrant = (g: string) => /^[a-z][a-z0-9+.-]*:/i.test(g);

/** Validates a registration and creates the client with a server-generated ≥256-bit secret (and client.created, in one transaction). */
export async function createClient<S extends Pick<Stores, 'clients' | 'events'> = Stores>(
  storage: Transactional<S>, clock: Clock, input: ClientInput, also?: (tx: S, client: Client) => Promise<void>,
): Promise<CreatedClient> {
  const named = checkClientName(input.name);
  if ('problem' in named) throw invalidRequest(named.problem);
  const { name } = named;
  const grantTypes = input.grantTypes?.length ? [...new Set(input.grantTypes)] : ['authorization_code', 'refresh_token'];
  const unknown = grantTypes.filter((g) => !GRANT_TYPES.includes(g) && !isExtensionGrant(g));
  if (unknown.length) throw invalidRequest(`unknown grant type: ${unknown.join(', ')}`);
  const isPublic = input.public === true || input.authMethod === 'none';
  const authMethod = (isPublic ? 'none' : input.authMethod ?? (hasTlsCertificate(input) ? 'self_signed_tls_client_auth' : 'client_secret_basic')) as ClientAuthMethod;
  if (!AUTH_METHODS.includes(authMethod)) throw invalidRequest(`unknown auth method: ${authMethod}`);
  const access = clientAccess(input, authMethod);
  const current = currentClientOptions(input, authMethod);
  if (typeof current === 'string') throw invalidRequest(current);
  if (isPublic && grantTypes.some((g) => g === 'client_credentials' || g === 'password')) {
    throw invalidRequest('a public client cannot use the client_credentials or password grant');
  }
  const tokenFormat = (input.tokenFormat ?? 'jwt') as TokenFormat;
  if (tokenFormat !== 'jwt' && tokenFormat !== 'opaque') throw invalidRequest('token format must be jwt or opaque');
  const domain = input.domain?.trim() || null;
  if (domain && !domainHost(domain)) throw invalidRequest(`invalid domain: ${domain}`);
  const redirectUris = [...new Set(input.redirectUris ?? [])];
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri, domain);
    if (problem) throw invalidRequest(problem);
  }
  if (grantTypes.some((g) => REDIRECTING.includes(g)) && redirectUris.length === 0) {
    throw invalidRequest('at least one redirect URI is required for the authorization_code and implicit grants');
  }
  const postLogoutRedirectUris = [...new Set(input.postLogoutRedirectUris ?? [])];
  for (const uri of postLogoutRedirectUris) {
    const problem = redirectUriProblem(uri, domain);
    if (problem) throw invalidRequest(`post-logout ${problem}`);
  }
  const backchannelLogoutUri = input.backchannelLogoutUri?.trim() || null;
  if (backchannelLogoutUri) {
    // Back-Channel Logout 1.0 §2.2: an absolute URI without a fragment; the server POSTs to it, so http(s) only.
    const problem = redirectUriProblem(backchannelLogoutUri, domain);
    if (problem || !/^https?:/i.test(backchannelLogoutUri)) throw invalidRequest(`back-channel logout URI: ${problem ?? 'must be an http(s) URI'}`);
  }
  const resources = [...new Set((input.resources ?? []).map((r) => r.trim()).filter(Boolean))];
  const resourcesProblem = registeredResourcesProblem(resources);
  if (resourcesProblem) throw invalidRequest(resourcesProblem);
  let scope: string[];
  try {
    scope = parseScope(input.scope ?? 'user');
  } catch {
    throw invalidRequest('malformed scope');
  }
  // A client that authenticates with its certificate has no secret (RFC 8705 §2.2).
  // Neither does one that signs assertions with its own key (RFC 7523 §2.2).
  const secret = isPublic || authMethod === 'self_signed_tls_client_auth' || authMethod === 'private_key_jwt' ? undefined : randomToken(32);
  const client: Client = {
    id: randomToken(16),
    name,
    secretHash: secret ? sha256(secret) : null,
    previousSecretHash: null,
    previousSecretExpiresAt: null,
    redirectUris,
    grantTypes,
    scope,
    authMethod,
    trusted: input.trusted === true,
    introspect: input.introspect === true,
    domain,
    tokenFormat,
    ...access,
    ...current,
    // OpenID Connect Core §9: the HMAC key of client_secret_jwt is the secret itself.
    ...(authMethod === 'client_secret_jwt' && secret ? { jwtSecret: secret } : {}),
    postLogoutRedirectUris,
    backchannelLogoutUri,
    ...(resources.length ? { resources } : {}),
    createdAt: clock.now(),
  };
  await storage.transaction(async (tx) => {
    await tx.clients.create(client);
    await recordEvent(tx, 'client.created', {
      client_id: client.id, client_name: client.name, grant_types: client.grantTypes, redirect_uris: client.redirectUris, token_endpoint_auth_method: client.authMethod,
    }, client.createdAt);
    // What the caller stores with the client, in the same transaction (dynamic registration's access token).
    await also?.(tx, client);
  });
  return { client, secret };
}

/** New secret; the old one keeps working for `graceSeconds` so deployments can roll over. */
export async function rotateClientSecret(storage: Pick<Storage, 'clients' | 'transaction'>, clock: Clock, clientId: string, graceSeconds: number): Promise<string> {
  const client = await storage.clients.get(clientId);
  if (!client) throw notFound('unknown client');
  if (!client.secretHash) throw invalidRequest('a public client has no secret');
  const secret = randomToken(32);
  const now = clock.now();
  const previousSecretExpiresAt = now + graceSeconds * 1000;
  await storage.transaction(async (tx) => {
    // A client_secret_jwt client's HMAC key changes at once (the grace period covers presented secrets only).
    await tx.clients.update(clientId, { secretHash: sha256(secret), previousSecretHash: client.secretHash, previousSecretExpiresAt, ...(client.authMethod === 'client_secret_jwt' ? { jwtSecret: secret } : {}) });
    await recordEvent(tx, 'client.secret_rotated', { client_id: clientId, previous_secret_expires_at: rfc3339(previousSecretExpiresAt) }, now);
  });
  return secret;
}

/** The client as shown by the CLI and the admin API (docs/operations.md, Command line and Admin HTTP API). */
export function describeClient(c: Client, secret?: string): Record<string, unknown> {
  return {
    client_id: c.id,
    ...(secret ? { client_secret: secret } : {}),
    client_name: c.name,
    redirect_uris: c.redirectUris,
    grant_types: c.grantTypes,
    scope: c.scope.join(' '),
    token_endpoint_auth_method: c.authMethod,
    trusted: c.trusted,
    introspect: c.introspect,
    domain: c.domain,
    token_format: c.tokenFormat,
    ...(c.tlsCertThumbprint ? { tls_client_certificate_thumbprint: c.tlsCertThumbprint } : {}),
    ...(c.allowedAddresses?.length ? { allowed_addresses: c.allowedAddresses } : {}),
    post_logout_redirect_uris: c.postLogoutRedirectUris,
    backchannel_logout_uri: c.backchannelLogoutUri,
    ...(c.idTokenAlg ? { id_token_signed_response_alg: c.idTokenAlg } : {}),
    ...(c.requirePar ? { require_pushed_authorization_requests: true } : {}),
    ...(c.dpopBoundAccessTokens ? { dpop_bound_access_tokens: true } : {}),
    ...(c.publicTokenExchange ? { public_token_exchange: true } : {}),
    ...(c.jwksUri ? { jwks_uri: c.jwksUri } : {}),
    ...(c.jwks ? { jwks: JSON.parse(c.jwks) as unknown } : {}),
    ...(c.resources?.length ? { resources: c.resources } : {}),
    ...(c.backchannelTokenDeliveryMode ? { backchannel_token_delivery_mode: c.backchannelTokenDeliveryMode } : {}),
    ...(c.backchannelNotificationEndpoint ? { backchannel_client_notification_endpoint: c.backchannelNotificationEndpoint } : {}),
  };
}

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

export interface UserInput {
  username: string;
  email: string;
  /** The password, or its hash when the caller already checked it against the policy and hashed it (UserAccounts.prepare). */
  password: string | { readonly hash: string };
  name?: string | null;
}

export async function createUser(stores: Pick<Stores, 'users'>, hasher: PasswordHasher, clock: Clock, input: UserInput): Promise<User> {
  if (!USERNAME.test(input.username ?? '')) throw invalidRequest('username: 1–64 letters, digits, dot, dash or underscore, starting with a letter or digit');
  if (!EMAIL.test(input.email ?? '') || input.email.length > 254) throw invalidRequest('email is not a valid address');
  // NIST SP 800-63B §5.1.1.2: at least 8 characters; long passphrases allowed.
  const prepared = typeof input.password === 'object' && input.password !== null ? input.password : undefined;
  if (!prepared && (typeof input.password !== 'string' || input.password.length < 8 || input.password.length > 1024)) {
    throw invalidRequest('password must be 8 to 1024 characters');
  }
  if (await stores.users.findByUsername(input.username)) throw invalidRequest('username already taken');
  const user: User = {
    id: randomUUID(),
    username: input.username,
    email: input.email,
    name: input.name ?? null,
    passwordHash: prepared ? prepared.hash : await hasher.hash(input.password as string),
    createdAt: clock.now(),
  };
  await stores.users.create(user);
  return user;
}

/** An account and its `user.created` event in one transaction (the outbox commits with the change). */
export function createUserRecorded(storage: Pick<Storage, 'transaction'>, hasher: PasswordHasher, clock: Clock, input: UserInput, createdBy: 'cli' | 'admin' | 'api'): Promise<User> {
  return storage.transaction(async (tx) => {
    const made = await createUser(tx, hasher, clock, input);
    await recordEvent(tx, 'user.created', { user_id: made.id, username: made.username, created_by: createdBy }, made.createdAt);
    return made;
  });
}
