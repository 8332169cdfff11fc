import { sql, type Kysely } from 'kysely';
import type { ConsoleBot, ConsoleStore, ConsoleUser } from '../../core/console/ports.js';
import type { DB } from '../schema.js';

/* The columns migration 0009_admin_users adds (src/store/console/migration.ts). */
declare module '../schema.js' {
  interface UsersTable {
    // NOT NULL DEFAULT 0; typed nullable so the user store's inserts need not name it.
    is_admin: number | null;
    locked_at: number | null;
  }
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export class SqlConsoleStore implements ConsoleStore {
  constructor(private readonly db: Kysely<DB>) {}

  async isAdmin(userId: string): Promise<boolean> {
    const r = await this.db.selectFrom('users').select('is_admin').where('id', '=', userId).executeTakeFirst();
    return Number(r?.is_admin ?? 0) === 1;
  }

  async setAdmin(userId: string, admin: boolean): Promise<boolean> {
    const r = await this.db.updateTable('users').set({ is_admin: admin ? 1 : 0 }).where('id', '=', userId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async isLocked(userId: string): Promise<boolean> {
    const r = await this.db.selectFrom('users').select('locked_at').where('id', '=', userId).executeTakeFirst();
    return num(r?.locked_at) !== null;
  }

  async setLocked(userId: string, at: number | null): Promise<boolean> {
    const r = await this.db.updateTable('users').set({ locked_at: at }).where('id', '=', userId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  private users() {
    return this.db.selectFrom('users').select(['id', 'username', 'email', 'name', 'created_at', 'is_admin', 'locked_at']);
  }

  async getUser(userId: string): Promise<ConsoleUser | undefined> {
    const r = await this.users().where('id', '=', userId).executeTakeFirst();
    return r && toUser(r);
  }

  async listUsers(opts: { limit: number; offset: number; search?: string }): Promise<ConsoleUser[]> {
    let q = this.users();
    if (opts.search) {
      // LIKE's own wildcards in the search are taken literally.
      const prefix = `${opts.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = q.where((eb) => eb.or([
        eb('username_lower', 'like', sql<string>`${prefix} escape '\\'`),
        eb(sql`lower(email)`, 'like', sql<string>`${prefix} escape '\\'`),
      ]));
    }
    const rows = await q.orderBy('username_lower').limit(opts.limit).offset(opts.offset).execute();
    return rows.map(toUser);
  }

  async listBots(limit: number): Promise<ConsoleBot[]> {
    const rows = await this.db.selectFrom('bots').leftJoin('users', 'users.id', 'bots.owner_user_id')
      .select(['bots.id', 'bots.username', 'bots.name', 'users.username as owner', 'bots.webhook_url', 'bots.last_error_date', 'bots.last_error_message'])
      .orderBy('bots.id').limit(limit).execute();
    return rows.map((r) => ({
      id: Number(r.id), username: r.username, name: r.name, owner: r.owner ?? null, webhookUrl: r.webhook_url,
      lastErrorDate: num(r.last_error_date), lastErrorMessage: r.last_error_message,
    }));
  }
}

function toUser(r: { id: string; username: string; email: string; name: string | null; created_at: number; is_admin: number | null; locked_at: number | null }): ConsoleUser {
  return {
    id: r.id, username: r.username, email: r.email, name: r.name, createdAt: Number(r.created_at),
    admin: Number(r.is_admin) === 1, lockedAt: num(r.locked_at),
  };
}
