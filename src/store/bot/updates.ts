import type { Update } from '@grammyjs/types';
import { CompiledQuery, PostgresAdapter, type Kysely } from 'kysely';
import type { PolledUpdates, StoredUpdate, UpdateStore } from '../../core/bot/ports.js';
import type { BotUpdatesTable, DB } from '../schema.js';
import { nextUpdateId } from './bots.js';

/** What JSON.stringify writes first for an update built with update_id 0 (its first key). */
const ID_PREFIX = '{"update_id":0';

/**
 * UpdateStore.addMany on PostgreSQL: $1 bot, $2 count, $3 now, $4 the rows
 * (o: 1-based position, c: chat, p: the payload after its update_id) as a
 * JSON array. No rows when the bot is gone (nothing stored).
 */
const ADD_UPDATES_PG = `with n as (update bots set last_update_id = last_update_id + $2::int where id = $1::bigint returning last_update_id),
  ins as (insert into bot_updates (bot_id, update_id, chat_id, payload, created_at, attempts, next_attempt_at)
    select $1::bigint, n.last_update_id - $2::int + v.o, v.c, '{"update_id":' || (n.last_update_id - $2::int + v.o) || v.p, $3::bigint, 0, 0
    from n, json_to_recordset($4::json) as v(o int, c bigint, p text))
  select last_update_id as last from n`;

/** $1 bot, $2 the first update_id, $3 limit; without $2, all ($2 limit). */
const LIST_FROM_PG = 'select * from bot_updates where bot_id = $1::bigint and update_id >= $2::bigint order by update_id limit $3::int';
const LIST_ALL_PG = 'select * from bot_updates where bot_id = $1::bigint order by update_id limit $2::int';
/** $1 bot, $2 offset (deletes below it, lists from it), $3 limit. */
const CONFIRM_AND_LIST_PG = `with gone as (delete from bot_updates where bot_id = $1::bigint and update_id < $2::bigint)
  select * from bot_updates where bot_id = $1::bigint and update_id >= $2::bigint order by update_id limit $3::int`;

/**
 * UpdateStore.pollAs on PostgreSQL: $1 bot, $2 offset, $3 limit, $4 the token hash the caller holds. The bot row's
 * state, and with it (left join: none when the token changed or a webhook is set) the updates from the offset; the
 * deletion below the offset only under the same condition. No row: no such bot.
 */
const POLL_AS_PG = `with b as (select token_hash, webhook_url is not null as hooked, allowed_updates from bots where id = $1::bigint),
  gone as (delete from bot_updates where bot_id = $1::bigint and update_id < $2::bigint
    and exists (select 1 from b where b.token_hash = $4::text and not b.hooked))
  select b.token_hash as b_token_hash, b.hooked as b_hooked, b.allowed_updates as b_allowed_updates, u.*
  from b left join lateral (select * from bot_updates where bot_id = $1::bigint and update_id >= $2::bigint order by update_id limit $3::int) u
    on b.token_hash = $4::text and not b.hooked
  order by u.update_id`;

type PollRow = { b_token_hash: string | null; b_hooked: boolean; b_allowed_updates: string | null } & Partial<BotUpdatesTable>;

const toUpdate = (r: BotUpdatesTable): StoredUpdate => ({
  botId: r.bot_id, updateId: r.update_id, chatId: r.chat_id, update: JSON.parse(r.payload) as Update, createdAt: r.created_at,
  attempts: r.attempts, nextAttemptAt: r.next_attempt_at,
});

export class SqlUpdateStore implements UpdateStore {
  private readonly pg: boolean;

  constructor(private readonly db: Kysely<DB>) {
    this.pg = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  /** Call inside a transaction: the id allocation and the insert commit together. */
  async add(botId: number, chatId: number | null, build: (updateId: number) => Update, now: number): Promise<Update> {
    return (await this.addMany(botId, [{ chatId, build }], now))[0]!;
  }

  /**
   * One counter update for all of them, then one multi-row insert (call
   * inside a transaction). On PostgreSQL both are one statement whose text
   * is the same for any count (the rows as one JSON array), so it stays
   * prepared: each payload is serialised once, without its update_id, which
   * the statement puts in front as it allocates the ids.
   */
  async addMany(botId: number, items: { chatId: number | null; build: (updateId: number) => Update }[], now: number): Promise<Update[]> {
    if (items.length === 0) return [];
    if (this.pg) {
      const built = items.map((it) => it.build(0));
      const rests = built.map((u) => JSON.stringify(u).slice(ID_PREFIX.length));
      if (built.every((u, k) => Object.keys(u)[0] === 'update_id' && rests[k]!.startsWith(','))) {
        const rows = JSON.stringify(items.map((it, k) => ({ o: k + 1, c: it.chatId, p: rests[k] })));
        const r = await this.db.executeQuery<{ last: string | number }>(CompiledQuery.raw(ADD_UPDATES_PG, [botId, items.length, now, rows]));
        const last = r.rows[0];
        if (!last) throw new Error(`no bot ${botId}`);
        const first = Number(last.last) - items.length + 1;
        return built.map((u, k) => ({ ...u, update_id: first + k }));
      }
    }
    const first = (await nextUpdateId(this.db, botId, items.length)) - items.length + 1;
    const updates = items.map((it, k) => it.build(first + k));
    await this.db.insertInto('bot_updates').values(updates.map((u, k) => ({
      bot_id: botId, update_id: first + k, chat_id: items[k]!.chatId, payload: JSON.stringify(u), created_at: now, attempts: 0, next_attempt_at: 0,
    }))).execute();
    return updates;
  }

  async list(botId: number, fromId: number | undefined, limit: number): Promise<StoredUpdate[]> {
    if (this.pg) {
      const query = fromId === undefined ? CompiledQuery.raw(LIST_ALL_PG, [botId, limit]) : CompiledQuery.raw(LIST_FROM_PG, [botId, fromId, limit]);
      return (await this.db.executeQuery<BotUpdatesTable>(query)).rows.map(toUpdate);
    }
    let q = this.db.selectFrom('bot_updates').selectAll().where('bot_id', '=', botId);
    if (fromId !== undefined) q = q.where('update_id', '>=', fromId);
    const rows = await q.orderBy('update_id').limit(limit).execute();
    return rows.map(toUpdate);
  }

  /**
   * getUpdates with an offset: the updates below it deleted, those from it
   * listed. On PostgreSQL one statement (the deletion a data-modifying WITH:
   * the list reads only rows it does not touch), answered once the deletion
   * has committed.
   */
  async confirmAndList(botId: number, offset: number, limit: number): Promise<StoredUpdate[]> {
    if (this.pg) return (await this.db.executeQuery<BotUpdatesTable>(CompiledQuery.raw(CONFIRM_AND_LIST_PG, [botId, offset, limit]))).rows.map(toUpdate);
    await this.deleteBelow(botId, offset);
    return this.list(botId, offset, limit);
  }

  async pollAs(botId: number, tokenHash: string, offset: number, limit: number): Promise<PolledUpdates | undefined> {
    if (this.pg) {
      const { rows } = await this.db.executeQuery<PollRow>(CompiledQuery.raw(POLL_AS_PG, [botId, offset, limit, tokenHash]));
      const b = rows[0];
      if (!b || b.b_token_hash !== tokenHash) return undefined;
      const allowedUpdates = b.b_allowed_updates === null ? null : (JSON.parse(b.b_allowed_updates) as string[]);
      const updates = rows.filter((r) => r.update_id !== null && r.update_id !== undefined).map((r) => toUpdate(r as BotUpdatesTable));
      return { webhookSet: b.b_hooked, allowedUpdates, updates };
    }
    const b = await this.db.selectFrom('bots').select(['token_hash', 'webhook_url', 'allowed_updates']).where('id', '=', botId).executeTakeFirst();
    if (!b || b.token_hash !== tokenHash) return undefined;
    const allowedUpdates = b.allowed_updates === null ? null : (JSON.parse(b.allowed_updates) as string[]);
    if (b.webhook_url !== null) return { webhookSet: true, allowedUpdates, updates: [] };
    return { webhookSet: false, allowedUpdates, updates: await this.confirmAndList(botId, offset, limit) };
  }

  async deleteBelow(botId: number, updateId: number): Promise<number> {
    const r = await this.db.deleteFrom('bot_updates').where('bot_id', '=', botId).where('update_id', '<', updateId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async keepLast(botId: number, count: number): Promise<void> {
    const nth = await this.db.selectFrom('bot_updates').select('update_id').where('bot_id', '=', botId)
      .orderBy('update_id', 'desc').offset(count - 1).limit(1).executeTakeFirst();
    if (nth) await this.deleteBelow(botId, Number(nth.update_id));
  }

  async deleteAll(botId: number): Promise<void> {
    await this.db.deleteFrom('bot_updates').where('bot_id', '=', botId).execute();
  }

  async delete(botId: number, updateId: number): Promise<void> {
    await this.db.deleteFrom('bot_updates').where('bot_id', '=', botId).where('update_id', '=', updateId).execute();
  }

  async count(botId: number): Promise<number> {
    const r = await this.db.selectFrom('bot_updates').select((eb) => eb.fn.countAll<number>().as('n')).where('bot_id', '=', botId).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async markAttempt(botId: number, updateId: number, attempts: number, nextAttemptAt: number): Promise<void> {
    await this.db.updateTable('bot_updates').set({ attempts, next_attempt_at: nextAttemptAt })
      .where('bot_id', '=', botId).where('update_id', '=', updateId).execute();
  }

  async purgeOlderThan(time: number): Promise<number> {
    const r = await this.db.deleteFrom('bot_updates').where('created_at', '<', time).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
