import { randomBytes } from 'node:crypto';
import type { Kysely, Migration } from 'kysely';

/**
 * 0027_mail: e-mail through the outbox. `mail_messages` holds what each
 * queued message says, sealed under the secret key (its links carry
 * single-use tokens), keyed by its outbox row; the built-in endpoint of kind
 * `email` is what its deliveries go to, so the worker's leases, retries and
 * dead letters carry e-mail too. The endpoint's secret is never used: it is
 * stored here in clear and sealed at start like any secret from before
 * encryption (src/store/secrets/sealed.ts).
 */
export const mailMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('mail_messages')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    const now = Date.now();
    await (db as Kysely<{ webhook_endpoints: Record<string, unknown> }>).insertInto('webhook_endpoints').values({
      id: 'email', kind: 'email', url: null, chat_id: null, user_id: null, event_types: '', description: 'e-mail (GATEHOUSE_SMTP_URL)',
      secret: randomBytes(24).toString('base64url'), previous_secret: null, previous_secret_expires_at: null, ordered: 0,
      disabled_at: null, disabled_reason: null, failing_since: null, created_at: now, updated_at: now,
    }).execute();
  },
};
