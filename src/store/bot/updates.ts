import type { Update } from '@grammyjs/types';
import type { Kysely } from 'kysely';
import type { StoredUpdate, UpdateStore } from '../../core/bot/ports.js';
import type { BotUpdatesTable, DB } from '../schema.js';
import { nextUpdateId } from './bots.js';

const toUpdate = (r: BotUpdatesTable): StoredUpdate => ({
  botId: r.bot_id, updateId: r.update_id, chatId: r.chat_id, update: JSON.parse(r.payload) as Update, createdAt: r.created_at,
  attempts: r.attempts, nextAttemptAt: r.next_attempt_at,
});

export class SqlUpdateStore implements UpdateStore {
  constructor(private readonly db: Kysely<DB>) {}

  /** Call inside a transaction: the id allocation and the insert commit together. */
  async add(botId: number, chatId: number | null, build: (updateId: number) => Update, now: number): Promise<Update> {
    return (await this.addMany(botId, [{ chatId, build }], now))[0]!;
  }

  /** One counter update for all of them, then one multi-row insert (call inside a transaction). */
  async addMany(botId: number, items: { chatId: number | null; build: (updateId: number) => Update }[], now: number): Promise<Update[]> {
    if (items.length === 0) return [];
    const first = (await nextUpdateId(this.db, botId, items.length)) - items.length + 1;
    const updates = items.map((it, k) => it.build(first + k));
    await this.db.insertInto('bot_updates').values(updates.map((u, k) => ({
      bot_id: botId, update_id: first + k, chat_id: items[k]!.chatId, payload: JSON.stringify(u), created_at: now, attempts: 0, next_attempt_at: 0,
    }))).execute();
    return updates;
  }

  async list(botId: number, fromId: number | undefined, limit: number): Promise<StoredUpdate[]> {
    let q = this.db.selectFrom('bot_updates').selectAll().where('bot_id', '=', botId);
    if (fromId !== undefined) q = q.where('update_id', '>=', fromId);
    const rows = await q.orderBy('update_id').limit(limit).execute();
    return rows.map(toUpdate);
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
