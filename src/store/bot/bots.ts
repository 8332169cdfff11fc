import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { BotUsernameTakenError, type BotRecord, type BotStore, type NewBot, type Webhook } from '../../core/bot/ports.js';
import { firstUpdateId } from '../../core/bot/token.js';
import type { BotsTable, DB } from '../schema.js';
import { isUniqueViolation } from '../codec.js';
import type { SecretBox } from '../../core/secret-box.js';
import { BOT_WEBHOOK_SECRET } from '../secrets/sealed.js';

const list = (s: string | null): string[] | null => (s === null ? null : (JSON.parse(s) as string[]));

/** `secrets` remembers what it opened: a bot is read on every Bot API call. */
export const toBot = (r: BotsTable, secrets: SecretBox): BotRecord => ({
  id: r.id,
  username: r.username,
  name: r.name,
  ownerUserId: r.owner_user_id,
  tokenHash: r.token_hash,
  webhook: r.webhook_url === null ? null : {
    url: r.webhook_url, secretToken: secrets.openNullable(r.webhook_secret, BOT_WEBHOOK_SECRET.aad(r.id)), maxConnections: r.webhook_max_connections ?? 40,
    allowedUpdates: list(r.webhook_allowed_updates), setAt: r.webhook_set_at ?? 0,
  },
  allowedUpdates: list(r.allowed_updates),
  lastErrorDate: r.last_error_date,
  lastErrorMessage: r.last_error_message,
  createdAt: r.created_at,
});

/**
 * Every write to a bot row made in this process bumps this, so a bot cached
 * before it is never served again, whichever store instance (root or
 * transaction) made the change.
 */
let generation = 0;
const changed = () => void generation++;

/** How long a bot found by its token stays cached. Other processes see a revoked token this much later at most (see SqlBotStore). */
export const BOT_CACHE_TTL_MS = 1_000;
const BOT_CACHE_MAX = 10_000;

const copyBot = (b: BotRecord): BotRecord => ({
  ...b, webhook: b.webhook && { ...b.webhook, allowedUpdates: b.webhook.allowedUpdates && [...b.webhook.allowedUpdates] },
  allowedUpdates: b.allowedUpdates && [...b.allowedUpdates],
});

export class SqlBotStore implements BotStore {
  /**
   * Every Bot API call finds its bot by the token's hash, so that read is
   * cached briefly, outside transactions only, as clients are
   * (src/store/clients.ts). A change made in this process (a revoked token,
   * a deleted bot, a webhook) clears it at once. Another process sharing the
   * database sees a change after at most `cacheTtlMs`, and only if it served
   * the bot within that time: there a revoked token keeps working that long.
   * Methods that act on the bot's webhook or updates read the row again
   * (src/core/bot/api.ts). Unknown hashes are never cached, so a bot created
   * or a token issued elsewhere works at once.
   */
  private readonly cache = new Map<string, { bot: BotRecord; generation: number; expiresAt: number }>();

  constructor(private readonly db: Kysely<DB>, private readonly secrets: SecretBox, private readonly cacheTtlMs = BOT_CACHE_TTL_MS) {}

  async create(b: NewBot): Promise<void> {
    try {
      await this.db.insertInto('bots').values({
        id: b.id, username: b.username, username_lower: b.username.toLowerCase(), name: b.name, owner_user_id: b.ownerUserId,
        token_hash: b.tokenHash, webhook_url: null, webhook_secret: null, webhook_max_connections: null, webhook_allowed_updates: null,
        webhook_set_at: null, allowed_updates: null, last_error_date: null, last_error_message: null,
        last_update_id: firstUpdateId() - 1, created_at: b.createdAt,
      }).execute();
    } catch (e) {
      if (isUniqueViolation(e)) throw new BotUsernameTakenError(b.username);
      throw e;
    }
  }

  async get(id: number): Promise<BotRecord | undefined> {
    const r = await this.db.selectFrom('bots').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toBot(r, this.secrets);
  }

  findByTokenHash(hash: string): Promise<BotRecord | undefined> {
    return this.cached(hash, () => this.db.selectFrom('bots').selectAll().where('token_hash', '=', hash).executeTakeFirst());
  }

  /**
   * Cached as findByTokenHash is (a person's every message finds its bot by
   * username), under its own keys: the same generation clears both, and a
   * bot found here is never one another process deleted more than
   * `cacheTtlMs` ago. Unknown usernames are not cached.
   */
  findByUsername(username: string): Promise<BotRecord | undefined> {
    const lower = username.toLowerCase();
    return this.cached(`@${lower}`, () => this.db.selectFrom('bots').selectAll().where('username_lower', '=', lower).executeTakeFirst());
  }

  /** A bot by `key` from this process's cache while fresh, else `read` (remembered when found; never inside a transaction). */
  private async cached(key: string, read: () => Promise<DB['bots'] | undefined>): Promise<BotRecord | undefined> {
    const useCache = this.cacheTtlMs > 0 && !this.db.isTransaction;
    if (useCache) {
      const hit = this.cache.get(key);
      if (hit && hit.generation === generation && hit.expiresAt > performance.now()) return copyBot(hit.bot);
    }
    const seen = generation;
    const r = await read();
    const bot = r && toBot(r, this.secrets);
    if (bot && useCache) this.remember(key, bot, seen);
    return bot;
  }

  private remember(key: string, bot: BotRecord, seen: number): void {
    if (this.cache.size >= BOT_CACHE_MAX) this.cache.clear();
    // `seen`, not the current generation: a change that landed while we read must not be masked.
    this.cache.set(key, { bot: copyBot(bot), generation: seen, expiresAt: performance.now() + this.cacheTtlMs });
  }

  async listByOwner(userId: string): Promise<BotRecord[]> {
    const rows = await this.db.selectFrom('bots').selectAll().where('owner_user_id', '=', userId).orderBy('created_at').execute();
    return rows.map((r) => toBot(r, this.secrets));
  }

  async setTokenHash(id: number, hash: string | null): Promise<void> {
    await this.db.updateTable('bots').set({ token_hash: hash }).where('id', '=', id).execute();
    // After the write: a read that began before it must not be cached under the new generation.
    changed();
  }

  async setName(id: number, name: string): Promise<void> {
    await this.db.updateTable('bots').set({ name }).where('id', '=', id).execute();
    changed();
  }

  /** The bot row goes first, so its token stops working before anything else is removed. */
  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('bots').where('id', '=', id).execute();
    changed();
    await this.db.deleteFrom('bot_updates').where('bot_id', '=', id).execute();
    await this.db.deleteFrom('bot_messages').where('bot_id', '=', id).execute();
    await this.db.deleteFrom('bot_chats').where('bot_id', '=', id).execute();
    for (const table of ['bot_callback_queries', 'bot_commands', 'bot_profiles'] as const) await this.db.deleteFrom(table).where('bot_id', '=', id).execute();
    // Its files' rows (and their usage): the bytes no other row names go with the next sweep (BotFiles.sweep).
    await this.db.deleteFrom('bot_file_chats').where('file_id', 'in', this.db.selectFrom('bot_files').select('file_id').where('bot_id', '=', id)).execute();
    await this.db.deleteFrom('bot_files').where('bot_id', '=', id).execute();
    await this.db.deleteFrom('bot_file_usage').where('bot_id', '=', id).execute();
  }

  async setWebhook(id: number, w: Webhook | null): Promise<void> {
    await this.db.updateTable('bots').set({
      webhook_url: w?.url ?? null, webhook_secret: this.secrets.sealNullable(w?.secretToken ?? null, BOT_WEBHOOK_SECRET.aad(id)), webhook_max_connections: w?.maxConnections ?? null,
      webhook_allowed_updates: w?.allowedUpdates ? JSON.stringify(w.allowedUpdates) : null, webhook_set_at: w?.setAt ?? null,
    }).where('id', '=', id).execute();
    changed();
  }

  async setAllowedUpdates(id: number, allowed: string[] | null): Promise<void> {
    await this.db.updateTable('bots').set({ allowed_updates: allowed ? JSON.stringify(allowed) : null }).where('id', '=', id).execute();
    changed();
  }

  async setLastError(id: number, date: number | null, message: string | null): Promise<void> {
    await this.db.updateTable('bots').set({ last_error_date: date, last_error_message: message }).where('id', '=', id).execute();
    changed();
  }

  async listWithWebhook(): Promise<BotRecord[]> {
    const rows = await this.db.selectFrom('bots').selectAll().where('webhook_url', 'is not', null).execute();
    return rows.map((r) => toBot(r, this.secrets));
  }

  async nextUpdateId(id: number): Promise<number> {
    return nextUpdateId(this.db, id);
  }
}

/** Atomically takes `count` update_ids of a bot and returns the last (one statement; both dialects support RETURNING). */
export async function nextUpdateId(db: Kysely<DB>, id: number, count = 1): Promise<number> {
  const r = await db.updateTable('bots').set({ last_update_id: sql<number>`last_update_id + ${count}` })
    .where('id', '=', id).returning('last_update_id').executeTakeFirstOrThrow();
  return Number(r.last_update_id);
}
