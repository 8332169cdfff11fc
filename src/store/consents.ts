import type { Kysely } from 'kysely';
import type { Consent } from '../core/model.js';
import type { ConsentStore } from '../core/ports.js';
import type { ConsentsTable, DB } from './schema.js';
import { joinWords, words } from './codec.js';

const toConsent = (r: ConsentsTable): Consent => ({
  userId: r.user_id, clientId: r.client_id, scope: words(r.scope), createdAt: r.created_at, updatedAt: r.updated_at,
});

export class SqlConsentStore implements ConsentStore {
  constructor(private readonly db: Kysely<DB>) {}

  async get(userId: string, clientId: string): Promise<Consent | undefined> {
    const r = await this.db.selectFrom('consents').selectAll().where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst();
    return r && toConsent(r);
  }

  /**
   * Read, merge, then write only if the row is still what was read (compare
   * and set), retrying otherwise: two concurrent grants both land instead of
   * the later one overwriting the earlier one's scopes.
   */
  async grant(userId: string, clientId: string, scope: string[], now: number): Promise<Consent> {
    for (;;) {
      const existing = await this.get(userId, clientId);
      const merged = joinWords([...new Set([...(existing?.scope ?? []), ...scope])]);
      const r = existing
        ? await this.db.updateTable('consents').set({ scope: merged, updated_at: now })
          .where('user_id', '=', userId).where('client_id', '=', clientId).where('scope', '=', joinWords(existing.scope))
          .returningAll().executeTakeFirst()
        : await this.db.insertInto('consents')
          .values({ user_id: userId, client_id: clientId, scope: merged, created_at: now, updated_at: now })
          .onConflict((oc) => oc.columns(['user_id', 'client_id']).doNothing())
          .returningAll().executeTakeFirst();
      if (r) return toConsent(r);
    }
  }

  async revoke(userId: string, clientId: string): Promise<boolean> {
    const r = await this.db.deleteFrom('consents').where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async listForUser(userId: string): Promise<Consent[]> {
    return (await this.db.selectFrom('consents').selectAll().where('user_id', '=', userId).orderBy('updated_at', 'desc').execute()).map(toConsent);
  }
}
