import { CompiledQuery, PostgresAdapter, type Kysely } from 'kysely';
import type { CallbackAnswer, CallbackAnswerWrite, CallbackQueryStore, StoredCallbackQuery } from '../../core/bot/ports.js';
import type { BotCallbackQueriesTable, DB } from '../schema.js';

const toQuery = (r: BotCallbackQueriesTable): StoredCallbackQuery => ({
  id: r.id, botId: Number(r.bot_id), chatId: Number(r.chat_id), messageId: r.message_id, data: r.data, createdAt: Number(r.created_at),
  answeredAt: r.answered_at === null ? null : Number(r.answered_at), answer: r.answer === null ? null : (JSON.parse(r.answer) as CallbackAnswer),
});

type NewQuery = Omit<StoredCallbackQuery, 'answeredAt' | 'answer'>;

/**
 * Each statement compiled once per dialect and process (a store is made per
 * transaction, so the cache is the module's): building and compiling a
 * kysely query on every press cost about as much as the database's answer.
 * Parameters are bound per call in the order the builder placed them.
 */
const compiled = new Map<string, CompiledQuery<unknown>>();

function prepared(db: Kysely<DB>, key: string, build: () => { compile(): CompiledQuery<unknown> }): CompiledQuery<unknown> {
  const k = `${db.getExecutor().adapter instanceof PostgresAdapter ? 'pg' : 'sqlite'}:${key}`;
  let q = compiled.get(k);
  if (!q) compiled.set(k, (q = build().compile()));
  return q;
}

/**
 * `answers` answers in one UPDATE … FROM a VALUES list (SQLite 3.33+ and
 * PostgreSQL; the casts give PostgreSQL the list's column types).
 */
function answerStatement(answers: number, postgres: boolean): string {
  let n = 0;
  const p = () => (postgres ? `$${++n}` : '?');
  const rows = Array.from({ length: answers }, () => `(cast(${p()} as text), cast(${p()} as bigint), cast(${p()} as text), cast(${p()} as bigint), cast(${p()} as bigint))`);
  return `with v (id, bot_id, answer, now, not_before) as (values ${rows.join(', ')})
    update bot_callback_queries set answered_at = v.now, answer = v.answer from v
    where bot_callback_queries.id = v.id and bot_callback_queries.bot_id = v.bot_id
      and bot_callback_queries.answered_at is null and bot_callback_queries.created_at >= v.not_before
    returning bot_callback_queries.id, bot_callback_queries.bot_id`;
}

export class SqlCallbackQueryStore implements CallbackQueryStore {
  constructor(private readonly db: Kysely<DB>) {}

  /** One multi-row insert (a group of presses); its statement compiled once per number of rows (at most a group's). */
  async add(qs: readonly NewQuery[]): Promise<void> {
    if (!qs.length) return;
    const q = prepared(this.db, `add:${qs.length}`, () => this.db.insertInto('bot_callback_queries').values(qs.map(() => ({
      id: '', bot_id: 0, chat_id: 0, message_id: 0, data: '', created_at: 0, answered_at: null, answer: null,
    }))));
    await this.db.executeQuery({ ...q, parameters: qs.flatMap((r) => [r.id, r.botId, r.chatId, r.messageId, r.data, r.createdAt, null, null]) });
  }

  async get(botId: number, id: string): Promise<StoredCallbackQuery | undefined> {
    const q = prepared(this.db, 'get', () => this.db.selectFrom('bot_callback_queries').selectAll().where('id', '=', '').where('bot_id', '=', 0));
    const r = (await this.db.executeQuery<BotCallbackQueriesTable>({ ...q, parameters: [id, botId] })).rows[0];
    return r && toQuery(r);
  }

  /** Served by 0020's index of answered presses: one index entry read. */
  async lastAnswered(botId: number, chatId: number, messageId: number, data: string): Promise<StoredCallbackQuery | undefined> {
    const q = prepared(this.db, 'lastAnswered', () => this.db.selectFrom('bot_callback_queries').selectAll().where('bot_id', '=', 0).where('chat_id', '=', 0)
      .where('message_id', '=', 0).where('data', '=', '').where('answered_at', 'is not', null).orderBy('answered_at', 'desc').limit(1));
    const r = (await this.db.executeQuery<BotCallbackQueriesTable>({ ...q, parameters: [botId, chatId, messageId, data, 1] })).rows[0];
    return r && toQuery(r);
  }

  /**
   * One conditional UPDATE for a group of answers: a row is written only
   * while unanswered, so of two concurrent answers (here or in another
   * process) only one finds it so; within the list a repeated query id keeps
   * its first answer only.
   */
  async answer(answers: readonly CallbackAnswerWrite[]): Promise<boolean[]> {
    const seen = new Set<string>();
    const first = answers.filter((a) => !seen.has(`${a.botId}:${a.id}`) && seen.add(`${a.botId}:${a.id}`));
    if (!first.length) return answers.map(() => false);
    const postgres = this.db.getExecutor().adapter instanceof PostgresAdapter;
    const key = `${postgres ? 'pg' : 'sqlite'}:answer:${first.length}`;
    let q = compiled.get(key);
    if (!q) compiled.set(key, (q = CompiledQuery.raw(answerStatement(first.length, postgres))));
    const { rows } = await this.db.executeQuery<{ id: string; bot_id: number }>({
      ...q, parameters: first.flatMap((a) => [a.id, a.botId, JSON.stringify(a.answer), a.now, a.notBefore]),
    });
    const written = new Set(rows.map((r) => `${Number(r.bot_id)}:${r.id}`));
    const claimed = new Set<string>();
    return answers.map((a) => {
      const k = `${a.botId}:${a.id}`;
      if (!written.has(k) || claimed.has(k)) return false;
      claimed.add(k);
      return true;
    });
  }

  async purgeOlderThan(time: number): Promise<number> {
    const r = await this.db.deleteFrom('bot_callback_queries').where('created_at', '<', time).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
