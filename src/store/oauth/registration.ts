import type { Kysely } from 'kysely';
import type {
  ClientRegistration, ClientRegistrationStore, InitialAccessToken, InitialAccessTokenStore, RegistrationStorage, RegistrationStores,
} from '../../core/oauth/registration-ports.js';
import type { SecretBox } from '../../core/secret-box.js';
import { SqlClientStore } from '../clients.js';
import { SqlEventStore } from '../notify/events.js';
import type { NotifyShared } from '../notify/shared.js';
import type { DB } from '../schema.js';
import { SqlTokenStore } from '../tokens.js';
import { runTransaction, type TxScope } from '../transaction.js';

export class SqlInitialAccessTokenStore implements InitialAccessTokenStore {
  constructor(private readonly db: Kysely<DB>) {}

  async create(t: InitialAccessToken): Promise<void> {
    await this.db.insertInto('registration_tokens').values({ token_hash: t.tokenHash, uses: t.uses, created_at: t.createdAt, expires_at: t.expiresAt }).execute();
    // Expired tokens go when a new one is made (a handful a deployment, so no purge job).
    await this.db.deleteFrom('registration_tokens').where('expires_at', '<=', t.createdAt).execute();
  }

  async get(tokenHash: string, now: number): Promise<InitialAccessToken | undefined> {
    const r = await this.db.selectFrom('registration_tokens').selectAll().where('token_hash', '=', tokenHash).where('expires_at', '>', now).where('uses', '>', 0).executeTakeFirst();
    return r && { tokenHash: r.token_hash, uses: Number(r.uses), createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) };
  }

  /** One conditional UPDATE: the database lets exactly `uses` of any number of concurrent takers through. */
  async take(tokenHash: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable('registration_tokens').set((eb) => ({ uses: eb('uses', '-', 1) }))
      .where('token_hash', '=', tokenHash).where('expires_at', '>', now).where('uses', '>', 0).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}

export class SqlClientRegistrationStore implements ClientRegistrationStore {
  constructor(private readonly db: Kysely<DB>) {}

  /** Inserts, or (an update's new token and metadata) replaces. */
  async save(r: ClientRegistration): Promise<void> {
    const values = { client_id: r.clientId, token_hash: r.tokenHash, metadata: JSON.stringify(r.metadata), created_at: r.createdAt };
    await this.db.insertInto('client_registrations').values(values)
      .onConflict((oc) => oc.column('client_id').doUpdateSet({ token_hash: values.token_hash, metadata: values.metadata })).execute();
  }

  async get(clientId: string): Promise<ClientRegistration | undefined> {
    const r = await this.db.selectFrom('client_registrations').selectAll().where('client_id', '=', clientId).executeTakeFirst();
    return r && { clientId: r.client_id, tokenHash: r.token_hash, metadata: JSON.parse(r.metadata) as Record<string, unknown>, createdAt: Number(r.created_at) };
  }

  async delete(clientId: string): Promise<void> {
    await this.db.deleteFrom('client_registrations').where('client_id', '=', clientId).execute();
  }
}

function storesOn(db: Kysely<DB>, notify: NotifyShared, secrets: SecretBox, scope?: TxScope): RegistrationStores {
  return {
    clients: new SqlClientStore(db, undefined, secrets),
    tokens: new SqlTokenStore(db),
    events: new SqlEventStore(db, notify, scope),
    registrations: new SqlClientRegistrationStore(db),
    initialTokens: new SqlInitialAccessTokenStore(db),
  };
}

/** Dynamic registration's stores (migration 0018_registration), on the main database and its transaction port. */
export function sqlRegistrationStorage(db: Kysely<DB>, notify: NotifyShared, secrets: SecretBox): RegistrationStorage {
  return { ...storesOn(db, notify, secrets), transaction: (fn) => runTransaction(db, (trx, scope) => storesOn(trx, notify, secrets, scope), fn) };
}
