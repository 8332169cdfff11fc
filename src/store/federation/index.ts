import type { Kysely } from 'kysely';
import type { FederationStorage, FederationStores } from '../../core/federation/ports.js';
import { SqlEventStore } from '../notify/events.js';
import type { NotifyShared } from '../notify/shared.js';
import type { DB } from '../schema.js';
import { runTransaction, type TxScope } from '../transaction.js';
import { SqlUserStore } from '../users.js';
import { SqlFlowStore } from './flows.js';
import { SqlIdentityStore } from './identities.js';

function storesOn(db: Kysely<DB>, notify: NotifyShared, scope?: TxScope): FederationStores {
  return { identities: new SqlIdentityStore(db), flows: new SqlFlowStore(db), users: new SqlUserStore(db), events: new SqlEventStore(db, notify, scope) };
}

/** Third-party login's stores, on the database (and migrations) of the rest of Gatehouse. */
export function sqlFederationStorage(db: Kysely<DB>, notify: NotifyShared): FederationStorage {
  return { ...storesOn(db, notify), transaction: (fn) => runTransaction(db, (trx, scope) => storesOn(trx, notify, scope), fn) };
}
