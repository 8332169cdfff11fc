import type { Kysely } from 'kysely';
import type { Client, ClientAuthMethod, IdTokenAlg, TokenFormat } from '../core/model.js';
import type { ClientStore } from '../core/ports.js';
import type { ClientsTable, DB } from './schema.js';
import { flag, joinWords, words } from './codec.js';
import type { SecretBox } from '../core/secret-box.js';
import { CLIENT_JWT_SECRET } from './secrets/sealed.js';

const toClient = (r: ClientsTable): Client => ({
  id: r.id,
  name: r.name,
  secretHash: r.secret_hash,
  previousSecretHash: r.previous_secret_hash,
  previousSecretExpiresAt: r.previous_secret_expires_at,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  grantTypes: words(r.grant_types),
  scope: words(r.scope),
  authMethod: r.auth_method as ClientAuthMethod,
  trusted: r.trusted === 1,
  introspect: r.introspect === 1,
  domain: r.domain,
  tokenFormat: r.token_format as TokenFormat,
  postLogoutRedirectUris: JSON.parse(r.post_logout_redirect_uris) as string[],
  backchannelLogoutUri: r.backchannel_logout_uri,
  createdAt: r.created_at,
  ...(r.tls_cert_thumbprint ? { tlsCertThumbprint: r.tls_cert_thumbprint } : {}),
  ...(r.allowed_addresses ? { allowedAddresses: words(r.allowed_addresses) } : {}),
  ...(r.id_token_alg ? { idTokenAlg: r.id_token_alg as IdTokenAlg } : {}),
  ...(r.require_par ? { requirePar: true } : {}),
  ...(r.jwks ? { jwks: r.jwks } : {}),
  ...(r.jwks_uri ? { jwksUri: r.jwks_uri } : {}),
  ...(r.resources ? { resources: words(r.resources) } : {}),
  ...(r.backchannel_token_delivery_mode ? { backchannelTokenDeliveryMode: r.backchannel_token_delivery_mode as 'poll' | 'ping' } : {}),
  ...(r.backchannel_client_notification_endpoint ? { backchannelNotificationEndpoint: r.backchannel_client_notification_endpoint } : {}),
  ...(r.dpop_bound_access_tokens ? { dpopBoundAccessTokens: true } : {}),
  ...(r.public_token_exchange ? { publicTokenExchange: true } : {}),
});

function toRow(c: Partial<Client>): Partial<ClientsTable> {
  const r: Partial<ClientsTable> = {};
  if (c.id !== undefined) r.id = c.id;
  if (c.name !== undefined) r.name = c.name;
  if (c.secretHash !== undefined) r.secret_hash = c.secretHash;
  if (c.previousSecretHash !== undefined) r.previous_secret_hash = c.previousSecretHash;
  if (c.previousSecretExpiresAt !== undefined) r.previous_secret_expires_at = c.previousSecretExpiresAt;
  if (c.redirectUris !== undefined) r.redirect_uris = JSON.stringify(c.redirectUris);
  if (c.grantTypes !== undefined) r.grant_types = joinWords(c.grantTypes);
  if (c.scope !== undefined) r.scope = joinWords(c.scope);
  if (c.authMethod !== undefined) r.auth_method = c.authMethod;
  if (c.trusted !== undefined) r.trusted = flag(c.trusted);
  if (c.introspect !== undefined) r.introspect = flag(c.introspect);
  if (c.domain !== undefined) r.domain = c.domain;
  if (c.tokenFormat !== undefined) r.token_format = c.tokenFormat;
  if (c.postLogoutRedirectUris !== undefined) r.post_logout_redirect_uris = JSON.stringify(c.postLogoutRedirectUris);
  if (c.backchannelLogoutUri !== undefined) r.backchannel_logout_uri = c.backchannelLogoutUri;
  if (c.createdAt !== undefined) r.created_at = c.createdAt;
  if (c.tlsCertThumbprint !== undefined) r.tls_cert_thumbprint = c.tlsCertThumbprint;
  if (c.allowedAddresses !== undefined) r.allowed_addresses = c.allowedAddresses.length ? joinWords(c.allowedAddresses) : null;
  if (c.idTokenAlg !== undefined) r.id_token_alg = c.idTokenAlg;
  if (c.requirePar !== undefined) r.require_par = flag(c.requirePar);
  if (c.jwks !== undefined) r.jwks = c.jwks;
  if (c.jwksUri !== undefined) r.jwks_uri = c.jwksUri;
  if (c.resources !== undefined) r.resources = c.resources.length ? joinWords(c.resources) : null;
  if (c.backchannelTokenDeliveryMode !== undefined) r.backchannel_token_delivery_mode = c.backchannelTokenDeliveryMode;
  if (c.backchannelNotificationEndpoint !== undefined) r.backchannel_client_notification_endpoint = c.backchannelNotificationEndpoint;
  if (c.dpopBoundAccessTokens !== undefined) r.dpop_bound_access_tokens = flag(c.dpopBoundAccessTokens);
  if (c.publicTokenExchange !== undefined) r.public_token_exchange = flag(c.publicTokenExchange);
  return r;
}

/**
 * Every client update or delete made in this process bumps this, so a cached
 * client read before it is never served again, whichever store instance
 * (root or transaction, any database) made the change.
 */
let generation = 0;

/** How long a client read stays cached. Other processes see a change this much later (see SqlClientStore). */
export const CLIENT_CACHE_TTL_MS = 2_000;
const CLIENT_CACHE_MAX = 10_000;

const copy = (c: Client): Client => ({
  ...c, redirectUris: [...c.redirectUris], grantTypes: [...c.grantTypes], scope: [...c.scope], postLogoutRedirectUris: [...c.postLogoutRedirectUris],
});

export class SqlClientStore implements ClientStore {
  /**
   * Client authentication reads the client on every token and introspection
   * request, so reads are cached briefly, outside transactions only (a
   * transaction must see its own writes). A change made through any store in
   * this process clears the cache at once. Another process sharing the
   * database (a second node) sees a change after at most `cacheTtlMs`: there
   * a deleted client keeps working, and a rotated secret's replacement is
   * refused, for that long, and only if that node served the client within it.
   * The same bound covers a change inside a PostgreSQL transaction racing a
   * read before it commits. Unknown ids are never cached, so a client created
   * elsewhere (the CLI) works at once.
   */
  private readonly cache = new Map<string, { client: Client; generation: number; expiresAt: number }>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly cacheTtlMs = CLIENT_CACHE_TTL_MS,
    private readonly secrets?: SecretBox,
  ) {}

  /** `jwt_secret` is sealed under the deployment's key, bound to the client's row (src/store/secrets/sealed.ts). */
  private sealed(id: string, row: Partial<ClientsTable>, c: Partial<Client>): Partial<ClientsTable> {
    if (c.jwtSecret !== undefined) {
      if (!this.secrets) throw new Error('this client store cannot seal secrets');
      row.jwt_secret = this.secrets.seal(c.jwtSecret, CLIENT_JWT_SECRET.aad(id));
    }
    return row;
  }

  private opened(r: ClientsTable): Client {
    const client = toClient(r);
    if (r.jwt_secret && this.secrets) client.jwtSecret = this.secrets.open(r.jwt_secret, CLIENT_JWT_SECRET.aad(r.id));
    return client;
  }

  async create(client: Client): Promise<void> {
    await this.db.insertInto('clients').values(this.sealed(client.id, toRow(client), client) as ClientsTable).execute();
  }

  async get(id: string): Promise<Client | undefined> {
    const useCache = this.cacheTtlMs > 0 && !this.db.isTransaction;
    if (useCache) {
      const hit = this.cache.get(id);
      if (hit && hit.generation === generation && hit.expiresAt > performance.now()) return copy(hit.client);
    }
    const seen = generation;
    const r = await this.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
    const client = r && this.opened(r);
    if (client && useCache) {
      if (this.cache.size >= CLIENT_CACHE_MAX) this.cache.clear();
      // `seen`, not the current generation: a change that landed while we read must not be masked.
      this.cache.set(id, { client: copy(client), generation: seen, expiresAt: performance.now() + this.cacheTtlMs });
    }
    return client;
  }

  async list(): Promise<Client[]> {
    return (await this.db.selectFrom('clients').selectAll().orderBy('created_at').execute()).map((r) => this.opened(r));
  }

  async update(id: string, patch: Partial<Omit<Client, 'id' | 'createdAt'>>): Promise<boolean> {
    generation++;
    const r = await this.db.updateTable('clients').set(this.sealed(id, toRow(patch), patch)).where('id', '=', id).executeTakeFirst();
    // Again after the write: a read that started before it may have cached the old row meanwhile.
    generation++;
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(id: string): Promise<boolean> {
    generation++;
    const r = await this.db.deleteFrom('clients').where('id', '=', id).executeTakeFirst();
    generation++;
    return Number(r.numDeletedRows) > 0;
  }
}
