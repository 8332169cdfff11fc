import type { Kysely } from 'kysely';
import type { BotStorage, BotStores } from '../../core/bot/ports.js';
import type { Storage } from '../../core/ports.js';
import type { EventStore } from '../../core/notify/ports.js';
import { eventStoreOn } from '../notify/events.js';
import type { SqlStorage } from '../index.js';
import type { DB } from '../schema.js';
import { SqlBotStore } from './bots.js';
import { SqlChatStore } from './chats.js';
import { SqlPersonStore } from './people.js';
import { SqlUpdateStore } from './updates.js';

function botStoresOn(db: Kysely<DB>, events: EventStore): BotStores {
  return {
    bots: new SqlBotStore(db), people: new SqlPersonStore(db), chats: new SqlChatStore(db), updates: new SqlUpdateStore(db),
    events: eventStoreOn(events, db),
  };
}

/** The chat-bot stores on the same database (and migrations) as the rest of Gatehouse. */
export function botStorage(storage: Storage): BotStorage {
  const database = (storage as Partial<SqlStorage>).database;
  if (!database) throw new Error('the chat-bot interface needs the SQL storage');
  const { db } = database;
  return { ...botStoresOn(db, storage.events), transaction: (fn) => db.transaction().execute((trx) => fn(botStoresOn(trx, storage.events))) };
}
