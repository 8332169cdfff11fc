import type { Kysely } from 'kysely';
import type { FederationStorage, FederationStores } from '../../core/federation/ports.js';
import type { Storage } from '../../core/ports.js';
import type { SqlStorage } from '../index.js';
import type { DB } from '../schema.js';
import { SqlUserStore } from '../users.js';
import { SqlFlowStore } from './flows.js';
import { SqlIdentityStore } from './identities.js';

function storesOn(db: Kysely<DB>): FederationStores {
  return { identities: new SqlIdentityStore(db), flows: new SqlFlowStore(db), users: new SqlUserStore(db) };
}

/** Third-party login's stores, on the same database (and migrations) as the rest of Gatehouse. */
export function federationStorage(storage: Storage): FederationStorage {
  const database = (storage as Partial<SqlStorage>).database;
  if (!database) throw new Error('third-party login needs the SQL storage');
  const { db } = database;
  return { ...storesOn(db), transaction: (fn) => db.transaction().execute((trx) => fn(storesOn(trx))) };
}
