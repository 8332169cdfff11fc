import type { Kysely } from 'kysely';
import type { Params } from '../../core/params.js';
import type { PushedRequestStore } from '../../core/oauth/par.js';
import type { DB } from '../schema.js';

/** Expired rows are deleted at most this often, by whichever push comes. */
const PURGE_EVERY_MS = 60_000;

export class SqlPushedRequestStore implements PushedRequestStore {
  private purgedAt = 0;

  constructor(private readonly db: Kysely<DB>) {}

  async push(r: { uriHash: string; clientId: string; params: Params; expiresAt: number }): Promise<void> {
    await this.db.insertInto('pushed_requests').values({ uri_hash: r.uriHash, client_id: r.clientId, params: JSON.stringify(r.params), expires_at: r.expiresAt }).execute();
    const now = Date.now();
    if (now - this.purgedAt > PURGE_EVERY_MS) {
      this.purgedAt = now;
      await this.db.deleteFrom('pushed_requests').where('expires_at', '<', r.expiresAt - 2 * 600_000).execute();
    }
  }

  async peek(uriHash: string, now: number): Promise<{ clientId: string; params: Params } | undefined> {
    const row = await this.db.selectFrom('pushed_requests').select(['client_id', 'params']).where('uri_hash', '=', uriHash).where('expires_at', '>', now).executeTakeFirst();
    return row && { clientId: row.client_id, params: JSON.parse(row.params) as Params };
  }

  /** One conditional DELETE: of concurrent consumers, in this process or another, exactly one deletes the row. */
  async consume(uriHash: string, now: number): Promise<boolean> {
    const r = await this.db.deleteFrom('pushed_requests').where('uri_hash', '=', uriHash).where('expires_at', '>', now).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}
