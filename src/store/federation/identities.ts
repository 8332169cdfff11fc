import type { Kysely } from 'kysely';
import type { ExternalIdentity, IdentityStore } from '../../core/federation/ports.js';
import type { DB, ExternalIdentitiesTable } from '../schema.js';

const toIdentity = (r: ExternalIdentitiesTable): ExternalIdentity => ({
  provider: r.provider, subject: r.subject, userId: r.user_id, createdAt: r.created_at, lastLoginAt: r.last_login_at,
});

export class SqlIdentityStore implements IdentityStore {
  constructor(private readonly db: Kysely<DB>) {}

  async find(provider: string, subject: string): Promise<ExternalIdentity | undefined> {
    const r = await this.db.selectFrom('external_identities').selectAll().where('provider', '=', provider).where('subject', '=', subject).executeTakeFirst();
    return r && toIdentity(r);
  }

  async link(i: ExternalIdentity): Promise<boolean> {
    // ON CONFLICT DO NOTHING rather than catching: a failed statement would abort a PostgreSQL transaction.
    const r = await this.db.insertInto('external_identities').values({
      provider: i.provider, subject: i.subject, user_id: i.userId, created_at: i.createdAt, last_login_at: i.lastLoginAt,
    }).onConflict((oc) => oc.columns(['provider', 'subject']).doNothing()).executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async touch(provider: string, subject: string, now: number): Promise<void> {
    await this.db.updateTable('external_identities').set({ last_login_at: now }).where('provider', '=', provider).where('subject', '=', subject).execute();
  }

  async unlink(provider: string, subject: string): Promise<void> {
    await this.db.deleteFrom('external_identities').where('provider', '=', provider).where('subject', '=', subject).execute();
  }

  async listForUser(userId: string): Promise<ExternalIdentity[]> {
    return (await this.db.selectFrom('external_identities').selectAll().where('user_id', '=', userId).orderBy('created_at').execute()).map(toIdentity);
  }
}
