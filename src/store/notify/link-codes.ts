import type { Kysely } from 'kysely';
import type { LinkCodeStore } from '../../core/notify/ports.js';
import type { DB } from '../schema.js';

/** One-time chat-link codes (src/core/notify/link-code.ts), by hash. */
export class SqlLinkCodeStore implements LinkCodeStore {
  constructor(private readonly db: Kysely<DB>) {}

  async issue(userId: string, codeHash: string, expiresAt: number, now: number): Promise<void> {
    // A new code replaces the person's earlier ones; expired ones of anyone go with them.
    await this.db.deleteFrom('notify_link_codes').where((e) => e.or([e('user_id', '=', userId), e('expires_at', '<=', now)])).execute();
    await this.db.insertInto('notify_link_codes').values({ code_hash: codeHash, user_id: userId, expires_at: expiresAt }).execute();
  }

  async consume(codeHash: string, now: number): Promise<string | undefined> {
    // One statement reads and burns (an expired code too): of two chats sending the same code, one gets the row.
    const row = await this.db.deleteFrom('notify_link_codes').where('code_hash', '=', codeHash)
      .returning(['user_id', 'expires_at']).executeTakeFirst();
    return row && Number(row.expires_at) > now ? row.user_id : undefined;
  }
}
