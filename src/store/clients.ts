import type { Kysely } from 'kysely';
import type { Client, ClientAuthMethod, TokenFormat } from '../core/model.js';
import type { ClientStore } from '../core/ports.js';
import type { ClientsTable, DB } from './schema.js';
import { flag, joinWords, words } from './codec.js';

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
  createdAt: r.created_at,
  ...(r.tls_cert_thumbprint ? { tlsCertThumbprint: r.tls_cert_thumbprint } : {}),
  ...(r.allowed_addresses ? { allowedAddresses: words(r.allowed_addresses) } : {}),
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
  if (c.createdAt !== undefined) r.created_at = c.createdAt;
  if (c.tlsCertThumbprint !== undefined) r.tls_cert_thumbprint = c.tlsCertThumbprint;
  if (c.allowedAddresses !== undefined) r.allowed_addresses = c.allowedAddresses.length ? joinWords(c.allowedAddresses) : null;
  return r;
}

export class SqlClientStore implements ClientStore {
  constructor(private readonly db: Kysely<DB>) {}

  async create(client: Client): Promise<void> {
    await this.db.insertInto('clients').values(toRow(client) as ClientsTable).execute();
  }

  async get(id: string): Promise<Client | undefined> {
    const r = await this.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toClient(r);
  }

  async list(): Promise<Client[]> {
    return (await this.db.selectFrom('clients').selectAll().orderBy('created_at').execute()).map(toClient);
  }

  async update(id: string, patch: Partial<Omit<Client, 'id' | 'createdAt'>>): Promise<boolean> {
    const r = await this.db.updateTable('clients').set(toRow(patch)).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('clients').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
