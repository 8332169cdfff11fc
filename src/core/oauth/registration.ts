import { createClient } from '../admin.js';
import { randomToken, safeEqual, sha256 } from '../crypto.js';
import { GatehouseError, invalidClientMetadata, invalidToken, missingToken, notFound, tooManyAttempts } from '../errors.js';
import type { Client } from '../model.js';
import { CredentialThrottle, type ThrottlePolicy } from '../throttle.js';
import type { Clock, RateLimitStore } from '../ports.js';
import { parseClientMetadata, type ClientMetadata } from './registration-metadata.js';
import type { ClientRegistration, RegistrationStorage } from './registration-ports.js';

/**
 * Dynamic client registration (RFC 7591) and its management protocol
 * (RFC 7592), off unless `GATEHOUSE_REGISTRATION` says `token` or `open`.
 *
 * - `token`: `POST /oauth/register` needs an initial access token (RFC 7591
 *   §3) from `gatehouse registration token`: stored as its SHA-256, valid for
 *   its `--ttl` and for `--uses` registrations (default one), counted by one
 *   conditional UPDATE in the registration's own transaction, so a token for
 *   one client registers one client however many requests race.
 * - Every client gets a registration access token (RFC 7592 §1.1), stored as
 *   its SHA-256 and compared in constant time; a wrong one is throttled like a
 *   client secret. A read cannot show it again (only the hash is kept); an
 *   update replaces it and answers the new one.
 * - Registered clients are never trusted: the consent page is always shown.
 *   They get only the built-in API as a resource (RFC 8707, see
 *   resource-indicators.ts), and `client.created` as every other way of
 *   creating a client.
 * - Registrations are rate limited per address and per initial access token
 *   (only those that store a client count).
 */
export const REGISTRATION_PATH = '/oauth/register';

/** `GATEHOUSE_REGISTRATION`. */
export type RegistrationMode = 'off' | 'token' | 'open';

/** Clients one address (or one initial access token) may register per hour. */
export const REGISTRATION_POLICY: ThrottlePolicy = { kind: 'register', perCredential: 30, perAddress: 30, windowMs: 60 * 60_000 };
/** Wrong initial access tokens and registration access tokens, per client id (or address) and address. */
export const REGISTRATION_TOKEN_POLICY: ThrottlePolicy = { kind: 'regtoken', perCredential: 10, perAddress: 20, windowMs: 15 * 60_000 };

export const INITIAL_TOKEN_PREFIX = 'gh_iat_';
const RAT_PREFIX = 'gh_rat_';

export interface RegistrationDeps {
  storage: RegistrationStorage;
  rateLimits: RateLimitStore;
  clock: Clock;
  issuer: string;
  mode: RegistrationMode;
  /** The grant types the token endpoint serves (extension grants included). */
  grantTypes: () => readonly string[];
}

export interface Registered {
  status: 200 | 201;
  body: Record<string, unknown>;
}

/** `Authorization: Bearer <token>` (RFC 6750 §2.1; the scheme is case-insensitive). */
function bearer(authorization: string | undefined): string | undefined {
  const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization ?? '');
  return m?.[1];
}

const refused = (d: string) => invalidToken(d, { challenge: { scheme: 'Bearer' } });

/** createClient's own refusals are metadata problems here (RFC 7591 §3.2.2). */
function asMetadataError(e: unknown): unknown {
  if (e instanceof GatehouseError && e.code === 'invalid_request') return invalidClientMetadata(e.description ?? 'invalid client metadata');
  return e;
}

export class DynamicRegistration {
  private readonly registrations: CredentialThrottle;
  private readonly badTokens: CredentialThrottle;

  constructor(private readonly deps: RegistrationDeps) {
    this.registrations = new CredentialThrottle(deps.rateLimits, deps.clock, REGISTRATION_POLICY);
    this.badTokens = new CredentialThrottle(deps.rateLimits, deps.clock, REGISTRATION_TOKEN_POLICY);
  }

  get enabled(): boolean {
    return this.deps.mode !== 'off';
  }

  /** `gatehouse registration token`: a new initial access token, shown once. */
  static async issueInitialToken(storage: Pick<RegistrationStorage, 'initialTokens'>, clock: Clock, ttlSeconds: number, uses: number): Promise<{ token: string; expiresAt: number }> {
    const token = INITIAL_TOKEN_PREFIX + randomToken(32);
    const now = clock.now();
    const expiresAt = now + ttlSeconds * 1000;
    await storage.initialTokens.create({ tokenHash: sha256(token), uses, createdAt: now, expiresAt });
    return { token, expiresAt };
  }

  private async limited(verdict: { allowed: boolean; retryAfterSeconds: number }, code: 'invalid_token' | 'invalid_request'): Promise<void> {
    if (!verdict.allowed) throw tooManyAttempts(code, 'too many attempts; try again later', verdict.retryAfterSeconds);
  }

  /** RFC 7591 §3: the initial access token, when the mode asks for one; its hash. */
  private async initialToken(authorization: string | undefined, address: string): Promise<string | undefined> {
    if (this.deps.mode === 'open') return undefined;
    const token = bearer(authorization);
    if (!token) throw missingToken();
    await this.limited(await this.badTokens.check(address, address), 'invalid_token');
    const hash = sha256(token);
    if (!(await this.deps.storage.initialTokens.get(hash, this.deps.clock.now()))) {
      await this.limited(await this.badTokens.failed(address, address), 'invalid_token');
      throw refused('the initial access token is not valid, expired or used up');
    }
    return hash;
  }

  /** RFC 7591 §3.1: registers a client from its metadata; 201 with the client information (§3.2.1). */
  async register(body: unknown, authorization: string | undefined, address: string): Promise<Registered> {
    if (!this.enabled) throw notFound('dynamic client registration is off');
    const initial = await this.initialToken(authorization, address);
    const meta = parseClientMetadata(body, this.deps.grantTypes());
    if (meta.clientId !== undefined || meta.clientSecret !== undefined) throw invalidClientMetadata('client_id and client_secret are assigned by the server');
    const gate = await this.registrations.admit(initial ?? address, address);
    await this.limited(gate, 'invalid_request');
    const rat = RAT_PREFIX + randomToken(32);
    const now = this.deps.clock.now();
    try {
      const { client, secret } = await createClient(this.deps.storage, this.deps.clock, {
        name: meta.name, redirectUris: meta.redirectUris, grantTypes: meta.grantTypes, scope: meta.scope, authMethod: meta.authMethod,
        public: meta.authMethod === 'none', trusted: false, introspect: false, domain: null,
        postLogoutRedirectUris: meta.postLogoutRedirectUris, backchannelLogoutUri: meta.backchannelLogoutUri,
        jwks: meta.jwks, jwksUri: meta.jwksUri, idTokenAlg: meta.idTokenAlg, requirePar: meta.requirePar,
      }, async (tx, c) => {
        // The use is taken in the client's transaction: a used-up token stores nothing.
        if (initial && !(await tx.initialTokens.take(initial, now))) throw refused('the initial access token is not valid, expired or used up');
        await tx.registrations.save({ clientId: c.id, tokenHash: sha256(rat), metadata: meta.extras, createdAt: now });
      });
      return { status: 201, body: { ...this.information(client, meta.extras, meta.responseTypes), ...(secret ? { client_secret: secret } : {}), registration_access_token: rat } };
    } catch (e) {
      // Only stored registrations count against the limit.
      await this.registrations.abandoned(initial ?? address, address);
      throw asMetadataError(e);
    }
  }

  /** RFC 7592 §2: the registration access token must be the client's; anything else is 401 (RFC 6750). */
  private async authorize(clientId: string, authorization: string | undefined, address: string): Promise<{ client: Client; registration: ClientRegistration }> {
    if (!this.enabled) throw notFound('dynamic client registration is off');
    const token = bearer(authorization);
    if (!token) throw missingToken();
    await this.limited(await this.badTokens.check(clientId, address), 'invalid_token');
    const registration = await this.deps.storage.registrations.get(clientId);
    const ok = registration !== undefined && safeEqual(sha256(token), registration.tokenHash);
    const client = ok ? await this.deps.storage.clients.get(clientId) : undefined;
    if (!ok || !client) {
      // §2.1: the client is gone (deleted by an operator): its registration goes with it.
      if (ok) await this.deps.storage.registrations.delete(clientId);
      await this.limited(await this.badTokens.failed(clientId, address), 'invalid_token');
      throw refused('the registration access token is not valid for this client');
    }
    return { client, registration: registration! };
  }

  /** RFC 7592 §2.1. */
  async read(clientId: string, authorization: string | undefined, address: string): Promise<Registered> {
    const { client, registration } = await this.authorize(clientId, authorization, address);
    return { status: 200, body: this.information(client, registration.metadata) };
  }

  /**
   * RFC 7592 §2.2: the metadata sent replaces what was registered (fields
   * left out are reset). The authentication method cannot change (a secret
   * cannot be re-derived from its hash): register a new client instead.
   */
  async update(clientId: string, body: unknown, authorization: string | undefined, address: string): Promise<Registered> {
    const { client } = await this.authorize(clientId, authorization, address);
    const meta: ClientMetadata = parseClientMetadata(body, this.deps.grantTypes());
    if (meta.clientId !== client.id) throw invalidClientMetadata('client_id must be the client\'s own (RFC 7592 §2.2)');
    if (meta.clientSecret !== undefined && !(client.secretHash && safeEqual(sha256(meta.clientSecret), client.secretHash))) throw invalidClientMetadata('client_secret does not match');
    if (meta.authMethod !== client.authMethod) throw invalidClientMetadata('token_endpoint_auth_method cannot change; register a new client');
    const rat = RAT_PREFIX + randomToken(32);
    const keys = client.authMethod === 'private_key_jwt' ? { jwks: meta.jwks ?? '', jwksUri: meta.jwksUri ?? '' } : {};
    const patch = {
      name: meta.name, redirectUris: meta.redirectUris, grantTypes: meta.grantTypes, scope: meta.scope.split(' '), requirePar: meta.requirePar,
      idTokenAlg: meta.idTokenAlg, postLogoutRedirectUris: meta.postLogoutRedirectUris, backchannelLogoutUri: meta.backchannelLogoutUri, ...keys,
    } satisfies Partial<Client>;
    await this.deps.storage.transaction(async (tx) => {
      await tx.clients.update(client.id, patch);
      await tx.registrations.save({ clientId: client.id, tokenHash: sha256(rat), metadata: meta.extras, createdAt: client.createdAt });
    });
    const updated: Client = { ...client, ...patch, ...(keys.jwks === '' ? { jwks: undefined } : {}), ...(keys.jwksUri === '' ? { jwksUri: undefined } : {}) } as Client;
    return { status: 200, body: { ...this.information(updated, meta.extras, meta.responseTypes), registration_access_token: rat } };
  }

  /** RFC 7592 §2.3: the client and its registration are deleted; 204. */
  async remove(clientId: string, authorization: string | undefined, address: string): Promise<void> {
    const { client } = await this.authorize(clientId, authorization, address);
    await this.deps.storage.transaction(async (tx) => {
      await tx.clients.delete(client.id);
      await tx.registrations.delete(client.id);
    });
  }

  /** RFC 7591 §3.2.1 client information (RFC 7592 §3), without secrets. */
  private information(c: Client, extras: Record<string, unknown>, responseTypes?: readonly string[]): Record<string, unknown> {
    return {
      client_id: c.id,
      client_id_issued_at: Math.floor(c.createdAt / 1000),
      // §3.2.1: REQUIRED when a secret was issued; 0: it does not expire.
      ...(c.secretHash ? { client_secret_expires_at: 0 } : {}),
      ...extras,
      client_name: c.name,
      redirect_uris: c.redirectUris,
      grant_types: c.grantTypes,
      response_types: responseTypes ? [...responseTypes] : c.grantTypes.includes('authorization_code') ? ['code'] : [],
      token_endpoint_auth_method: c.authMethod,
      scope: c.scope.join(' '),
      ...(c.jwks ? { jwks: JSON.parse(c.jwks) as unknown } : {}),
      ...(c.jwksUri ? { jwks_uri: c.jwksUri } : {}),
      // Dynamic Registration §3.2: the registered values, defaults included (ES256 when stored as the server's default).
      id_token_signed_response_alg: c.idTokenAlg ?? 'ES256',
      ...(c.requirePar ? { require_pushed_authorization_requests: true } : {}),
      ...(c.postLogoutRedirectUris.length ? { post_logout_redirect_uris: c.postLogoutRedirectUris } : {}),
      ...(c.backchannelLogoutUri ? { backchannel_logout_uri: c.backchannelLogoutUri } : {}),
      registration_client_uri: `${this.deps.issuer}${REGISTRATION_PATH}/${encodeURIComponent(c.id)}`,
    };
  }
}

/** RFC 8414 §2 `registration_endpoint`, when registration is on. */
export function registrationMetadata(issuer: string, enabled: boolean): Record<string, unknown> {
  return enabled ? { registration_endpoint: `${issuer}${REGISTRATION_PATH}` } : {};
}
