import { createHash, timingSafeEqual } from 'node:crypto';
import { invalidClient, invalidRequest, tooManyAttempts, type GatehouseError } from '../errors.js';
import type { Client } from '../model.js';
import type { ClientStore } from '../ports.js';
import { single, type Params } from '../params.js';
import type { CredentialThrottle } from '../throttle.js';
import { addressAllowed } from './addresses.js';
import { thumbprintsMatch } from './mtls.js';
import { assertionSubject, JWT_BEARER_ASSERTION, type ClientAssertions } from './client-assertion.js';

export interface ClientCredentialsInput {
  /** The Authorization header, if any. */
  authorization: string | undefined;
  params: Params;
  /** The caller's address, for clients limited to some (docs/oauth.md, Application-level access). */
  address?: string;
  /** `x5t#S256` of the TLS client certificate the caller presented, if any (RFC 8705). */
  clientCertThumbprint?: string;
}

export type AuthMethodUsed = 'client_secret_basic' | 'client_secret_post' | 'none' | 'self_signed_tls_client_auth' | 'private_key_jwt' | 'client_secret_jwt';

/**
 * A client registered with an address allow-list (docs/oauth.md, Application-level access) is refused
 * from anywhere else, before its credentials are looked at.
 */
function checkAddress(client: Client, input: ClientCredentialsInput): void {
  if (client.allowedAddresses?.length && !addressAllowed(client.allowedAddresses, input.address)) {
    throw refused('requests from this address are not accepted for this client');
  }
}

/**
 * A failed client authentication: 401 `invalid_client` with a Basic challenge
 * (RFC 6749 §5.2), except where a Basic challenge would name a method the
 * client is not registered for.
 */
const refused = (description: string, challenge = true) =>
  invalidClient(description, challenge ? undefined : { challenge: { scheme: 'none' } });

/**
 * RFC 6749 §2.3, RFC 7591 §2: a client authenticates only by the method it
 * registered, so a secret meant for the header is refused in the body.
 */
function requireMethod(client: Client, used: AuthMethodUsed, usedHeader: boolean): void {
  if (client.authMethod === used) return;
  const challenge = usedHeader || client.authMethod === 'client_secret_basic';
  throw refused(`this client authenticates with ${client.authMethod}`, challenge);
}

/** RFC 6749 §2.3.1: id and secret are form-encoded before Base64. */
function parseBasic(header: string): { id: string; secret: string } | undefined {
  const m = /^Basic[ ]+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return undefined;
  try {
    const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    const creds = { id: dec(decoded.slice(0, i)), secret: dec(decoded.slice(i + 1)) };
    // No client id or secret holds U+0000, and PostgreSQL text cannot: a lookup would fail.
    return creds.id.includes('\0') || creds.secret.includes('\0') ? undefined : creds;
  } catch {
    return undefined;
  }
}

/**
 * Constant-time check of a SHA-256 digest against a stored one (base64url, as
 * `sha256()` writes it). Both are 32 bytes, so unlike `safeEqual` nothing
 * needs hashing again to hide a length.
 */
function digestMatches(digest: Buffer, storedHash: string): boolean {
  const stored = Buffer.from(storedHash, 'base64url');
  return stored.length === digest.length && timingSafeEqual(digest, stored);
}

export function secretMatches(client: Client, secret: string, now: number): boolean {
  const digest = createHash('sha256').update(secret).digest();
  if (client.secretHash && digestMatches(digest, client.secretHash)) return true;
  return Boolean(
    client.previousSecretHash && client.previousSecretExpiresAt && client.previousSecretExpiresAt > now &&
      digestMatches(digest, client.previousSecretHash),
  );
}

/** The answer while a client id or an address is locked (src/core/throttle.ts). */
const tooMany = (retryAfterSeconds: number) =>
  tooManyAttempts('invalid_client', 'too many failed client authentication attempts; try again later', retryAfterSeconds);

/**
 * A client presenting a secret: its lock state is read with the client itself
 * (in parallel, so no round trip is added to the hot path's latency), and
 * nothing is written unless the secret turns out wrong.
 */
async function lookUpGated(clients: ClientStore, throttle: CredentialThrottle, id: string, address: string): Promise<Client | undefined> {
  const [gate, client] = await Promise.all([throttle.check(id, address), clients.get(id)]);
  if (!gate.allowed) throw tooMany(gate.retryAfterSeconds);
  return client;
}

/** Counts a wrong secret; the one that reaches the limit and every later one answer 429, as a right secret would. */
async function failure(throttle: CredentialThrottle, id: string, address: string): Promise<GatehouseError> {
  const verdict = await throttle.failed(id, address);
  return verdict.allowed ? refused('client authentication failed') : tooMany(verdict.retryAfterSeconds);
}

/**
 * RFC 7521 §4.2, RFC 7523 §2.2: `client_assertion_type` jwt-bearer and a
 * `client_assertion` signed by the client. Failures are throttled as wrong
 * secrets are; a replayed assertion is one. Only where `assertions` is given
 * (the token, PAR, introspection and revocation endpoints).
 */
async function byAssertion(clients: ClientStore, input: ClientCredentialsInput, throttle: CredentialThrottle, address: string, bodyId: string | undefined, assertions: ClientAssertions | undefined): Promise<Client> {
  const type = single(input.params, 'client_assertion_type');
  const assertion = single(input.params, 'client_assertion');
  if (type !== JWT_BEARER_ASSERTION) throw invalidRequest(`client_assertion_type must be ${JWT_BEARER_ASSERTION}`);
  if (!assertion) throw invalidRequest('missing client_assertion');
  if (!assertions) throw refused('client assertions are not accepted at this endpoint', false);
  const id = assertionSubject(assertion);
  if (id === undefined || (bodyId !== undefined && bodyId !== id)) throw refused('the client_assertion does not name this client (iss and sub must be the client_id)', false);
  const client = await lookUpGated(clients, throttle, id, address);
  if (!client) throw await failure(throttle, id, address);
  checkAddress(client, input);
  if (client.authMethod !== 'client_secret_jwt') requireMethod(client, 'private_key_jwt', false);
  if (!(await assertions.verify(client, assertion))) throw await failure(throttle, id, address);
  return client;
}

/**
 * Authenticates the client of a token, introspection or revocation request
 * (RFC 6749 §2.3) by the one method the client registered; public clients
 * identify themselves with `client_id` alone. More than one method is an error.
 * Wrong secrets are throttled per client_id as presented and per address
 * (locked as RFC 6819 §5.1.4.2.3 locks accounts): once locked, every secret,
 * right or wrong, gets 429.
 */
export async function authenticateClient(
  clients: ClientStore,
  input: ClientCredentialsInput,
  now: number,
  throttle: CredentialThrottle,
  assertions?: ClientAssertions,
): Promise<{ client: Client; method: AuthMethodUsed }> {
  const bodyId = single(input.params, 'client_id');
  const bodySecret = single(input.params, 'client_secret');
  const header = input.authorization;
  const usedHeader = header !== undefined && /^Basic\b/i.test(header);
  const address = input.address ?? '';

  if (input.params.client_assertion !== undefined || input.params.client_assertion_type !== undefined) {
    if (usedHeader || bodySecret !== undefined) throw invalidRequest('more than one client authentication method used');
    const client = await byAssertion(clients, input, throttle, address, bodyId, assertions);
    return { client, method: client.authMethod === 'client_secret_jwt' ? 'client_secret_jwt' : 'private_key_jwt' };
  }

  if (usedHeader) {
    if (bodySecret !== undefined) throw invalidRequest('more than one client authentication method used');
    const creds = parseBasic(header!);
    if (!creds) throw refused('malformed Basic credentials');
    if (bodyId !== undefined && bodyId !== creds.id) throw refused('client_id does not match the credentials');
    const client = await lookUpGated(clients, throttle, creds.id, address);
    if (!client) throw await failure(throttle, creds.id, address);
    checkAddress(client, input);
    requireMethod(client, 'client_secret_basic', true);
    if (!secretMatches(client, creds.secret, now)) throw await failure(throttle, creds.id, address);
    return { client, method: 'client_secret_basic' };
  }
  if (bodyId === undefined) throw refused('client authentication required');
  if (bodySecret !== undefined) {
    const client = await lookUpGated(clients, throttle, bodyId, address);
    if (!client) throw await failure(throttle, bodyId, address);
    checkAddress(client, input);
    requireMethod(client, 'client_secret_post', false);
    if (!secretMatches(client, bodySecret, now)) throw await failure(throttle, bodyId, address);
    return { client, method: 'client_secret_post' };
  }
  const client = await clients.get(bodyId);
  if (!client) throw refused('client authentication failed');
  checkAddress(client, input);
  if (client.authMethod === 'self_signed_tls_client_auth') {
    // RFC 8705 §2.2: the certificate presented in the TLS handshake must be the registered one.
    // No Basic challenge: the header is not how this client authenticates.
    if (!input.clientCertThumbprint) throw refused('a TLS client certificate is required', false);
    if (!thumbprintsMatch(input.clientCertThumbprint, client.tlsCertThumbprint)) throw refused('the TLS client certificate is not the registered one', false);
    return { client, method: 'self_signed_tls_client_auth' };
  }
  requireMethod(client, 'none', false);
  return { client, method: 'none' };
}
