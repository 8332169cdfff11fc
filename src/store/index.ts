import type { Kysely } from 'kysely';
import type { Storage, Stores } from '../core/ports.js';
import { SqlClientStore } from './clients.js';
import { SqlCodeStore } from './codes.js';
import { SqlConsentStore } from './consents.js';
import { openDatabase, ping, type Database } from './db.js';
import { SqlKeyStore } from './keys.js';
import { migrateToLatest } from './migrations.js';
import { SqlRateLimitStore } from './rate-limits.js';
import type { DB } from './schema.js';
import { SqlSessionStore } from './sessions.js';
import { SqlSignInStore } from './oidc/sign-ins.js';
import { SqlTokenStore } from './tokens.js';
import { SqlUserStore } from './users.js';
import { SqlEventStore } from './notify/events.js';
import { afterCommit, NotifyShared, type TxScope } from './notify/shared.js';

function storesOn(db: Kysely<DB>, notify: NotifyShared, scope?: TxScope): Stores {
  return {
    clients: new SqlClientStore(db),
    users: new SqlUserStore(db),
    codes: new SqlCodeStore(db),
    tokens: new SqlTokenStore(db),
    consents: new SqlConsentStore(db),
    keys: new SqlKeyStore(db),
    sessions: new SqlSessionStore(db),
    rateLimits: new SqlRateLimitStore(db),
    signIns: new SqlSignInStore(db),
    events: new SqlEventStore(db, notify, scope),
  };
}

export interface SqlStorage extends Storage {
  database: Database;
}

/** Opens the database at `url`, applies migrations, and returns every store on it. */
export async function openStorage(url: string): Promise<SqlStorage> {
  const database = await openDatabase(url);
  try {
    await migrateToLatest(database.db as Kysely<unknown>);
  } catch (e) {
    await database.close();
    throw e;
  }
  const { db } = database;
  // The outbox's subscription cache and commit wake-up, shared by every store on this database.
  const notify = new NotifyShared(db);
  notify.refresh();
  return {
    ...storesOn(db, notify),
    database,
    async transaction(fn) {
      const scope: TxScope = { appended: false, endpointsChanged: false };
      const result = await db.transaction().execute((trx) => fn(storesOn(trx, notify, scope)));
      afterCommit(notify, scope);
      return result;
    },
    ready: () => ping(db),
    close: () => database.close(),
  };
}

export { UsernameTakenError } from './users.js';
