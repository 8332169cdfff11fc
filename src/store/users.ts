import type { Kysely } from 'kysely';
import { GatehouseError } from '../core/errors.js';
import type { User } from '../core/model.js';
import type { UserStore } from '../core/ports.js';
import type { DB, UsersTable } from './schema.js';
import { isUniqueViolation } from './codec.js';

/* The column migration 0029_tokens_valid_after adds (src/store/tokens-valid-after-migration.ts). */
declare module './schema.js' {
  interface UsersTable {
    tokens_valid_after: number | null;
  }
}

const num = (v: number | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

const toUser = (r: UsersTable): User => ({
  id: r.id, username: r.username, email: r.email, name: r.name, passwordHash: r.password_hash, createdAt: r.created_at,
  // email_verified: migration 0032_email_verification (src/store/account).
  emailVerified: Number(r.email_verified) === 1,
  // locked_at: migration 0009_admin_users (src/store/console).
  lockedAt: num(r.locked_at),
  tokensValidAfter: num(r.tokens_valid_after),
});

/**
 * The unique index refused a username (regardless of case). A `GatehouseError`
 * (400 `invalid_request`, as the admin API answers a taken name) with its own
 * class, so the store's conformance suite and callers that offer another
 * name can recognise it.
 */
export class UsernameTakenError extends GatehouseError {
  constructor(username: string) {
    super('invalid_request', `username already taken: ${username}`);
    this.name = 'UsernameTakenError';
  }
}

export class SqlUserStore implements UserStore {
  constructor(private readonly db: Kysely<DB>) {}

  async create(u: User): Promise<void> {
    try {
      await this.db.insertInto('users').values({
        id: u.id, username: u.username, username_lower: u.username.toLowerCase(), email: u.email, name: u.name,
        password_hash: u.passwordHash, created_at: u.createdAt, email_verified: u.emailVerified ? 1 : 0,
      }).execute();
    } catch (e) {
      if (isUniqueViolation(e)) throw new UsernameTakenError(u.username);
      throw e;
    }
  }

  async get(id: string): Promise<User | undefined> {
    const r = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toUser(r);
  }

  async findByUsername(username: string): Promise<User | undefined> {
    const r = await this.db.selectFrom('users').selectAll().where('username_lower', '=', username.toLowerCase()).executeTakeFirst();
    return r && toUser(r);
  }

  async setLocked(userId: string, at: number | null): Promise<boolean> {
    // A lock moves tokens_valid_after to its time in the same statement; an unlock (null) leaves it.
    const r = await this.db.updateTable('users').set(at === null ? { locked_at: null } : { locked_at: at, tokens_valid_after: at })
      .where('id', '=', userId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
