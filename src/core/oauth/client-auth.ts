import { createHash, timingSafeEqual } from 'node:crypto';
import { OAuthError, invalidRequest } from '../errors.js';
import type { Client } from '../model.js';
import { isPublic } from '../model.js';
import type { ClientStore } from '../ports.js';
import { single, type Params } from '../params.js';
import { addressAllowed } from './addresses.js';
import { thumbprintsMatch } from './mtls.js';

export interface ClientCredentialsInput {
  /** The Authorization header, if any. */
  authorization: string | undefined;
  params: Params;
  /** The caller's address, for clients limited to some (spec §5.1). */
  address?: string;
  /** `x5t#S256` of the TLS client certificate the caller presented, if any (RFC 8705). */
  clientCertThumbprint?: string;
}

export type AuthMethodUsed = 'client_secret_basic' | 'client_secret_post' | 'none' | 'self_signed_tls_client_auth';

/**
 * spec §5.1: a client registered with an address allow-list is refused from
 * anywhere else, before its credentials are looked at.
 */
function checkAddress(client: Client, input: ClientCredentialsInput, usedHeader: boolean): void {
  if (client.allowedAddresses?.length && !addressAllowed(client.allowedAddresses, input.address)) {
    throw new ClientAuthError('requests from this address are not accepted for this client', usedHeader);
  }
}

/** A failed authentication through the header must answer 401 with a challenge (RFC 6749 §5.2). */
export class ClientAuthError extends OAuthError {
  constructor(description: string, readonly usedHeader: boolean) {
    super('invalid_client', description, 401);
  }
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

/**
 * Authenticates the client of a token, introspection or revocation request
 * (RFC 6749 §2.3). Confidential clients may send their secret by either
 * secret method (the seed's clients post it in the body); public clients
 * identify themselves with `client_id` alone. More than one method is an error.
 */
export async function authenticateClient(
  clients: ClientStore,
  input: ClientCredentialsInput,
  now: number,
): Promise<{ client: Client; method: AuthMethodUsed }> {
  const bodyId = single(input.params, 'client_id');
  const bodySecret = single(input.params, 'client_secret');
  const header = input.authorization;
  const usedHeader = header !== undefined && /^Basic\b/i.test(header);

  if (usedHeader) {
    if (bodySecret !== undefined) throw invalidRequest('more than one client authentication method used');
    const creds = parseBasic(header!);
    if (!creds) throw new ClientAuthError('malformed Basic credentials', true);
    if (bodyId !== undefined && bodyId !== creds.id) throw new ClientAuthError('client_id does not match the credentials', true);
    const client = await clients.get(creds.id);
    if (client) checkAddress(client, input, true);
    if (!client || isPublic(client) || !secretMatches(client, creds.secret, now)) throw new ClientAuthError('client authentication failed', true);
    return { client, method: 'client_secret_basic' };
  }
  if (bodyId === undefined) throw new ClientAuthError('client authentication required', false);
  const client = await clients.get(bodyId);
  if (!client) throw new ClientAuthError('client authentication failed', false);
  checkAddress(client, input, false);
  if (bodySecret !== undefined) {
    if (isPublic(client) || !secretMatches(client, bodySecret, now)) throw new ClientAuthError('client authentication failed', false);
    return { client, method: 'client_secret_post' };
  }
  if (client.authMethod === 'self_signed_tls_client_auth') {
    // RFC 8705 §2.2: the certificate presented in the TLS handshake must be the registered one.
    if (!input.clientCertThumbprint) throw new ClientAuthError('a TLS client certificate is required', false);
    if (!thumbprintsMatch(input.clientCertThumbprint, client.tlsCertThumbprint)) throw new ClientAuthError('the TLS client certificate is not the registered one', false);
    return { client, method: 'self_signed_tls_client_auth' };
  }
  if (!isPublic(client)) throw new ClientAuthError('client authentication required', false);
  return { client, method: 'none' };
}

