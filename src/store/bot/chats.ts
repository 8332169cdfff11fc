import type { MessageEntity, Update } from '@grammyjs/types';
import type { Kysely, QueryCreator } from 'kysely';
import { CompiledQuery, PostgresAdapter, sql, SqliteAdapter } from 'kysely';
import type { ReplyMarkup } from '../../core/bot/keyboards.js';
import type { ChatRecord, ChatStore, MessageContent, MessagePatch, NewMessage, Person, PersonMessages, StoredMessage } from '../../core/bot/ports.js';
import type { BotChatsTable, BotMessagesTable, DB } from '../schema.js';

const toChat = (r: BotChatsTable): ChatRecord => ({
  botId: r.bot_id, chatId: r.chat_id, userId: r.user_id, lastMessageId: r.last_message_id, state: r.state, createdAt: r.created_at, updatedAt: r.updated_at,
});

const toMessage = (r: BotMessagesTable): StoredMessage => ({
  botId: r.bot_id, chatId: r.chat_id, messageId: r.message_id, fromBot: r.from_bot === 1, date: r.date, text: r.text,
  entities: r.entities === null ? null : (JSON.parse(r.entities) as MessageEntity[]), replyToMessageId: r.reply_to_message_id, editDate: r.edit_date,
  replyMarkup: r.reply_markup === null ? null : (JSON.parse(r.reply_markup) as ReplyMarkup),
  content: r.content === null ? null : (JSON.parse(r.content) as MessageContent),
});

const markupColumn = (m: ReplyMarkup | null | undefined) => (m ? JSON.stringify(m) : null);

type PersonColumns = { p_user_id: string; p_id: number; p_username: string; p_name: string | null };
const personColumns = sql`p.user_id as p_user_id, p.id as p_id, u.username as p_username, u.name as p_name`;
const toPerson = (r: PersonColumns): Person => ({ userId: r.p_user_id, id: Number(r.p_id), username: r.p_username, name: r.p_name });
/** The chat `c`'s person, as `withPerson` joins it: a chat whose person is gone takes no message. */
const personExists = sql`exists (select 1 from bot_people p join users u on u.id = p.user_id where p.id = c.chat_id)`;

/** A chat row with its person's fields, as `withPerson` reads them in one statement. */
type ChatWithPersonRow = BotChatsTable & PersonColumns;

const withPersonSql = (by: 'id' | 'username') => sql<ChatWithPersonRow>`select c.*, ${personColumns}
  from bot_people p join users u on u.id = p.user_id join bot_chats c on c.bot_id = ${0} and c.chat_id = p.id
  where ${by === 'id' ? sql`p.id = ${0}` : sql`u.username_lower = ${''}`}`;

/** ChatStore.addMessages on PostgreSQL: $1 count, $2 now, $3 bot, $4 chat, $5 the rows as a JSON array. */
const ADD_MESSAGES_PG = `with n as (update bot_chats c set last_message_id = last_message_id + $1::int, updated_at = $2::bigint
    where c.bot_id = $3::bigint and c.chat_id = $4::bigint
      and exists (select 1 from bot_people p join users u on u.id = p.user_id where p.id = c.chat_id)
    returning c.*),
  ins as (insert into bot_messages (bot_id, chat_id, message_id, from_bot, date, text, entities, reply_to_message_id, edit_date, reply_markup, content)
    select $3::bigint, $4::bigint, n.last_message_id - $1::int + v.o, v.f, v.d, v.t, v.e, v.r, null, v.m, v.c
    from n, json_to_recordset($5::json) as v(o int, f int, d bigint, t text, e text, r int, m text, c text))
  select n.*, p.user_id as p_user_id, p.id as p_id, u.username as p_username, u.name as p_name
  from n join bot_people p on p.id = $4::bigint join users u on u.id = p.user_id`;

/**
 * ChatStore.addPersonMessages on PostgreSQL: $1 bot, $2 now, $3 the chats (c: chat, n: its messages, u/un/nm: the
 * person's user id, username and name as expected), $4 the messages (k: chat, o: 1-based position in its chat, then
 * as ADD_MESSAGES_PG), $5 the number of updates, $6 the updates (k: chat, o: the message's position, q: 1-based
 * position among the updates, p: the payload after its message_id). `ok`: every person is as expected; `l` locks the
 * chats in chat order (the order every group of writes takes, group-writes.ts) and only when it holds all of them
 * does `n` bump their counters; `b` takes the update ids once every chat is bumped, so the bot row is locked last.
 * A person not as expected or a chat missing: nothing is written.
 */
const ADD_PERSON_MESSAGES_PG = `with v as (select * from json_to_recordset($3::json) as v(c bigint, n int, u text, un text, nm text)),
  ok as (select count(*) = (select count(*) from v) as ok from v join bot_people p on p.id = v.c and p.user_id = v.u
    join users u on u.id = p.user_id where u.username = v.un and u.name is not distinct from v.nm),
  l as (select c.chat_id from bot_chats c where c.bot_id = $1::bigint and c.chat_id in (select v.c from v) and (select ok from ok)
    order by c.chat_id for update),
  n as (update bot_chats c set last_message_id = c.last_message_id + v.n, updated_at = $2::bigint
    from v where c.bot_id = $1::bigint and c.chat_id = v.c and c.chat_id in (select l.chat_id from l)
      and (select count(*) from l) = (select count(*) from v)
    returning c.*, v.n as added),
  whole as (select count(*) = (select count(*) from v) as ok from n),
  m as (insert into bot_messages (bot_id, chat_id, message_id, from_bot, date, text, entities, reply_to_message_id, edit_date, reply_markup, content)
    select $1::bigint, x.k, n.last_message_id - n.added + x.o, x.f, x.d, x.t, x.e, x.r, null, x.m, x.c
    from json_to_recordset($4::json) as x(k bigint, o int, f int, d bigint, t text, e text, r int, m text, c text)
    join n on n.chat_id = x.k where (select ok from whole)),
  b as (update bots set last_update_id = last_update_id + $5::int where id = $1::bigint and $5::int > 0 and (select ok from whole)
    returning last_update_id),
  up as (insert into bot_updates (bot_id, update_id, chat_id, payload, created_at, attempts, next_attempt_at)
    select $1::bigint, b.last_update_id - $5::int + y.q, y.k,
      '{"update_id":' || (b.last_update_id - $5::int + y.q) || ',"message":{"message_id":' || (n.last_message_id - n.added + y.o) || y.p,
      $2::bigint, 0, 0
    from b, json_to_recordset($6::json) as y(k bigint, o int, q int, p text) join n on n.chat_id = y.k)
  select n.*, (select b.last_update_id from b) as b_last from n`;

/** How an update for a person's message is serialised up to its message_id (both built as 0), for ADD_PERSON_MESSAGES_PG. */
const MESSAGE_UPDATE_PREFIX = '{"update_id":0,"message":{"message_id":0';

/** Compiled once per dialect and lookup (the Bot API reads a chat on every message it sends). */
const compiled = new Map<string, CompiledQuery<ChatWithPersonRow>>();

export class SqlChatStore implements ChatStore {
  /**
   * Only where there is such a statement (PostgreSQL): on SQLite the group's
   * transaction does these writes in-process, and the group does not build
   * the statement's input only to be told no.
   */
  readonly addPersonMessages?: ChatStore['addPersonMessages'];

  constructor(private readonly db: Kysely<DB>) {
    if (db.getExecutor().adapter instanceof PostgresAdapter) this.addPersonMessages = (botId, chats, now) => this.personMessagesPg(botId, chats, now);
  }

  /** The chat, created on first contact: a read in the common case, the insert only when it is missing. */
  async open(botId: number, chatId: number, userId: string, now: number): Promise<ChatRecord> {
    const existing = await this.get(botId, chatId);
    if (existing) return existing;
    await this.db.insertInto('bot_chats').values({ bot_id: botId, chat_id: chatId, user_id: userId, last_message_id: 0, state: null, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['bot_id', 'chat_id']).doNothing()).execute();
    return (await this.get(botId, chatId))!;
  }

  async get(botId: number, chatId: number): Promise<ChatRecord | undefined> {
    const r = await this.db.selectFrom('bot_chats').selectAll().where('bot_id', '=', botId).where('chat_id', '=', chatId).executeTakeFirst();
    return r && toChat(r);
  }

  async withPerson(botId: number, chat: number | string): Promise<{ person: Person; chat: ChatRecord } | undefined> {
    const by = typeof chat === 'number' ? 'id' : 'username';
    const key = `${this.db.getExecutor().adapter instanceof PostgresAdapter ? 'pg' : 'sqlite'}:${by}`;
    let query = compiled.get(key);
    if (!query) compiled.set(key, (query = withPersonSql(by).compile(this.db)));
    const { rows } = await this.db.executeQuery<ChatWithPersonRow>({ ...query, parameters: [botId, typeof chat === 'number' ? chat : chat.replace(/^@/, '').toLowerCase()] });
    const r = rows[0];
    return r && { person: toPerson(r), chat: toChat(r) };
  }

  async listForUser(userId: string): Promise<ChatRecord[]> {
    const rows = await this.db.selectFrom('bot_chats').selectAll().where('user_id', '=', userId).orderBy('updated_at', 'desc').execute();
    return rows.map(toChat);
  }

  async setState(botId: number, chatId: number, state: string | null): Promise<void> {
    await this.db.updateTable('bot_chats').set({ state }).where('bot_id', '=', botId).where('chat_id', '=', chatId).execute();
  }

  /**
   * message_id comes from one UPDATE … RETURNING on the chat row: concurrent
   * senders never share one. PostgreSQL: the counter and the insert in one
   * statement (a data-modifying WITH), one round trip and atomic by itself.
   */
  async addMessage(m: NewMessage, now: number): Promise<StoredMessage> {
    const values = {
      bot_id: m.botId, chat_id: m.chatId, from_bot: m.fromBot ? 1 : 0, date: m.date, text: m.text,
      entities: m.entities ? JSON.stringify(m.entities) : null, reply_to_message_id: m.replyToMessageId, edit_date: null,
      reply_markup: markupColumn(m.replyMarkup), content: m.content ? JSON.stringify(m.content) : null,
    };
    const bump = (db: QueryCreator<DB>) => db.updateTable('bot_chats').set({ last_message_id: sql<number>`last_message_id + 1`, updated_at: now })
      .where('bot_id', '=', m.botId).where('chat_id', '=', m.chatId).returning('last_message_id');
    let messageId: number;
    if (this.db.getExecutor().adapter instanceof PostgresAdapter) {
      const r = await this.db.with('n', bump)
        .insertInto('bot_messages').values({ ...values, message_id: (eb) => eb.selectFrom('n').select('n.last_message_id') })
        .returning('message_id').executeTakeFirstOrThrow();
      messageId = Number(r.message_id);
    } else {
      messageId = Number((await bump(this.db).executeTakeFirstOrThrow()).last_message_id);
      await this.db.insertInto('bot_messages').values({ ...values, message_id: messageId }).execute();
    }
    return { ...m, messageId, editDate: null, replyMarkup: m.replyMarkup ?? null, content: m.content ?? null };
  }

  /**
   * Several messages into one chat: one counter bump by their number, then
   * one insert of all their rows (their fields as one JSON array, so the
   * statement's text is the same for any count and stays prepared), and the
   * chat (as it is after the bump) with its person as `withPerson` reads
   * them. The two writes agree: one statement on PostgreSQL (data-modifying
   * WITHs, its text written out here so no query is compiled per call), one
   * transaction on SQLite (the caller's, else its own). Nothing is stored
   * when the chat or its person is missing (undefined).
   */
  async addMessages(botId: number, chatId: number, ms: NewMessage[], now: number): Promise<{ person: Person; chat: ChatRecord; messages: StoredMessage[] } | undefined> {
    const rows = JSON.stringify(ms.map((m, k) => ({
      o: k + 1, f: m.fromBot ? 1 : 0, d: m.date, t: m.text, e: m.entities ? JSON.stringify(m.entities) : null, r: m.replyToMessageId,
      m: markupColumn(m.replyMarkup), c: m.content ? JSON.stringify(m.content) : null,
    })));
    const n = ms.length;
    let found: ChatWithPersonRow | undefined;
    if (this.db.getExecutor().adapter instanceof PostgresAdapter) {
      found = (await this.db.executeQuery<ChatWithPersonRow>(CompiledQuery.raw(ADD_MESSAGES_PG, [n, now, botId, chatId, rows]))).rows[0];
    } else {
      const write = async (db: Kysely<DB>) => {
        const bumped = await sql<BotChatsTable>`update bot_chats as c set last_message_id = last_message_id + ${n}, updated_at = ${now}
          where c.bot_id = ${botId} and c.chat_id = ${chatId} and ${personExists} returning *`.execute(db);
        const chat = bumped.rows[0];
        if (!chat) return undefined;
        await sql`insert into bot_messages (bot_id, chat_id, message_id, from_bot, date, text, entities, reply_to_message_id, edit_date, reply_markup, content)
          select ${botId}, ${chatId}, ${Number(chat.last_message_id) - n} + (j.value ->> 'o'), j.value ->> 'f', j.value ->> 'd', j.value ->> 't', j.value ->> 'e',
            j.value ->> 'r', null, j.value ->> 'm', j.value ->> 'c'
          from json_each(${rows}) as j`.execute(db);
        const p = await sql<PersonColumns>`select ${personColumns} from bot_people p join users u on u.id = p.user_id where p.id = ${chatId}`.execute(db);
        return { ...chat, ...p.rows[0]! };
      };
      found = this.db.isTransaction ? await write(this.db) : await this.db.transaction().execute(write);
    }
    if (!found) return undefined;
    const chat = toChat(found);
    const last = Number(chat.lastMessageId);
    return {
      person: toPerson(found), chat,
      messages: ms.map((m, k) => ({ ...m, messageId: last - n + k + 1, editDate: null, replyMarkup: m.replyMarkup ?? null, content: m.content ?? null })),
    };
  }

  private async personMessagesPg(botId: number, chats: PersonMessages[], now: number): Promise<{ chat: ChatRecord; messages: StoredMessage[]; updates: Update[] }[] | undefined> {
    if (chats.length === 0) return undefined;
    const all = chats.flatMap((c) => c.messages);
    const withUpdates = all.filter((m) => m.update).length;
    if (withUpdates !== 0 && withUpdates !== all.length) return undefined;
    const stored = (m: NewMessage, messageId: number): StoredMessage => ({ ...m, messageId, editDate: null, replyMarkup: m.replyMarkup ?? null, content: m.content ?? null });
    // Each update built once with both ids 0; the statement writes the ids in front of the rest of it.
    const built: Update[][] = [];
    const updateRows: { k: number; o: number; q: number; p: string }[] = [];
    for (const c of chats) {
      const list: Update[] = [];
      for (const [k, { message, update }] of c.messages.entries()) {
        if (!update) continue;
        const u = update(stored(message, 0))(0);
        const json = JSON.stringify(u);
        if (!json.startsWith(MESSAGE_UPDATE_PREFIX) || json[MESSAGE_UPDATE_PREFIX.length] !== ',') return undefined;
        list.push(u);
        updateRows.push({ k: c.person.id, o: k + 1, q: updateRows.length + 1, p: json.slice(MESSAGE_UPDATE_PREFIX.length) });
      }
      built.push(list);
    }
    const chatRows = JSON.stringify(chats.map((c) => ({ c: c.person.id, n: c.messages.length, u: c.person.userId, un: c.person.username, nm: c.person.name })));
    const messageRows = JSON.stringify(chats.flatMap((c) => c.messages.map(({ message: m }, k) => ({
      k: c.person.id, o: k + 1, f: m.fromBot ? 1 : 0, d: m.date, t: m.text, e: m.entities ? JSON.stringify(m.entities) : null, r: m.replyToMessageId,
      m: markupColumn(m.replyMarkup), c: m.content ? JSON.stringify(m.content) : null,
    }))));
    const { rows } = await this.db.executeQuery<BotChatsTable & { added: number; b_last: string | number | null }>(
      CompiledQuery.raw(ADD_PERSON_MESSAGES_PG, [botId, now, chatRows, messageRows, updateRows.length, JSON.stringify(updateRows)]));
    if (rows.length !== chats.length) return undefined;
    if (updateRows.length && (rows[0]!.b_last === null || rows[0]!.b_last === undefined)) throw new Error(`no bot ${botId}`);
    let updateId = Number(rows[0]!.b_last) - updateRows.length;
    const byChat = new Map(rows.map((r) => [Number(r.chat_id), r]));
    return chats.map((c, i) => {
      const r = byChat.get(c.person.id)!;
      const first = Number(r.last_message_id) - c.messages.length + 1;
      const messages = c.messages.map(({ message }, k) => stored(message, first + k));
      const updates = built[i]!.map((u, k) => ({ ...u, update_id: ++updateId, message: { ...u.message!, message_id: first + k } }) as Update);
      return { chat: toChat(r), messages, updates };
    });
  }

  async getMessage(botId: number, chatId: number, messageId: number): Promise<StoredMessage | undefined> {
    const r = await this.db.selectFrom('bot_messages').selectAll()
      .where('bot_id', '=', botId).where('chat_id', '=', chatId).where('message_id', '=', messageId).executeTakeFirst();
    return r && toMessage(r);
  }

  async editMessage(botId: number, chatId: number, messageId: number, patch: MessagePatch, opts: { erase?: boolean } = {}): Promise<boolean> {
    const r = await this.db.updateTable('bot_messages')
      .set({
        text: patch.text, entities: patch.entities ? JSON.stringify(patch.entities) : null, edit_date: patch.editDate,
        ...(patch.replyMarkup !== undefined ? { reply_markup: markupColumn(patch.replyMarkup) } : {}),
      })
      .where('bot_id', '=', botId).where('chat_id', '=', chatId).where('message_id', '=', messageId).executeTakeFirst();
    if (opts.erase) await this.eraseOldVersions();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * SQLite: secure_delete (src/store/db.ts) zeroes the old text in the page;
   * the write-ahead log still holds earlier copies of the page until a
   * checkpoint copies the latest over the database file and TRUNCATE empties
   * the log. PostgreSQL keeps the old row version until VACUUM reclaims it.
   */
  private async eraseOldVersions(): Promise<void> {
    if (this.db.isTransaction || !(this.db.getExecutor().adapter instanceof SqliteAdapter)) return;
    // Busy while another process reads an older snapshot or writes: a few short waits, then the next checkpoint does it.
    for (let attempt = 0; attempt < 3; attempt++) {
      const { rows } = await sql<{ busy: number }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(this.db);
      if (!rows[0]?.busy) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async deleteMessage(botId: number, chatId: number, messageId: number): Promise<boolean> {
    const r = await this.db.deleteFrom('bot_messages')
      .where('bot_id', '=', botId).where('chat_id', '=', chatId).where('message_id', '=', messageId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async messagesAfter(botId: number, chatId: number, after: number, limit: number): Promise<StoredMessage[]> {
    const rows = await this.db.selectFrom('bot_messages').selectAll()
      .where('bot_id', '=', botId).where('chat_id', '=', chatId).where('message_id', '>', after)
      .orderBy('message_id').limit(limit).execute();
    return rows.map(toMessage);
  }

  async lastMessage(botId: number, chatId: number): Promise<StoredMessage | undefined> {
    const r = await this.db.selectFrom('bot_messages').selectAll()
      .where('bot_id', '=', botId).where('chat_id', '=', chatId).orderBy('message_id', 'desc').limit(1).executeTakeFirst();
    return r && toMessage(r);
  }
}
