import type { Kysely } from 'kysely';
import type { BotStorage, BotStores } from '../../core/bot/ports.js';
import { SqlEventStore } from '../notify/events.js';
import type { NotifyShared } from '../notify/shared.js';
import type { DB } from '../schema.js';
import { runTransaction, type TxScope } from '../transaction.js';
import { SqlBotStore } from './bots.js';
import { SqlCallbackQueryStore } from './callbacks.js';
import { SqlChatStore } from './chats.js';
import { SqlBotFileStore } from './files.js';
import { SqlPersonStore } from './people.js';
import { SqlBotProfileStore } from './profiles.js';
import { SqlUpdateStore } from './updates.js';

function botStoresOn(db: Kysely<DB>, notify: NotifyShared, scope?: TxScope): BotStores {
  return {
    bots: new SqlBotStore(db, notify.secrets), people: new SqlPersonStore(db), chats: new SqlChatStore(db), updates: new SqlUpdateStore(db),
    callbacks: new SqlCallbackQueryStore(db),
    profiles: new SqlBotProfileStore(db),
    files: new SqlBotFileStore(db),
    events: new SqlEventStore(db, notify, scope),
  };
}

/** The chat-bot stores on the database (and migrations) of the rest of Gatehouse; `bot.created` commits with the bot. */
export function sqlBotStorage(db: Kysely<DB>, notify: NotifyShared): BotStorage {
  return { ...botStoresOn(db, notify), transaction: (fn) => runTransaction(db, (trx, scope) => botStoresOn(trx, notify, scope), fn) };
}
