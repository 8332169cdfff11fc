import type { Kysely } from 'kysely';
import type { Person, PersonStore } from '../../core/bot/ports.js';
import type { DB } from '../schema.js';

export class SqlPersonStore implements PersonStore {
  constructor(private readonly db: Kysely<DB>) {}

  /** Insert-or-ignore: concurrent first contacts of one person agree on one id. */
  async ensure(userId: string, candidate: number): Promise<number> {
    try {
      await this.db.insertInto('bot_people').values({ user_id: userId, id: candidate, created_at: Date.now() })
        .onConflict((oc) => oc.column('user_id').doNothing()).execute();
    } catch {
      // The random id was taken by someone else: the caller tries another.
    }
    const r = await this.db.selectFrom('bot_people').select('id').where('user_id', '=', userId).executeTakeFirst();
    return r ? Number(r.id) : 0;
  }

  private query() {
    return this.db.selectFrom('bot_people').innerJoin('users', 'users.id', 'bot_people.user_id')
      .select(['bot_people.user_id as userId', 'bot_people.id as id', 'users.username as username', 'users.name as name']);
  }

  async get(userId: string): Promise<Person | undefined> {
    return this.query().where('bot_people.user_id', '=', userId).executeTakeFirst();
  }

  async getById(id: number): Promise<Person | undefined> {
    return this.query().where('bot_people.id', '=', id).executeTakeFirst();
  }

  async findByUsername(username: string): Promise<Person | undefined> {
    return this.query().where('users.username_lower', '=', username.toLowerCase()).executeTakeFirst();
  }
}
