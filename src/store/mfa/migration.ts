import type { Kysely, Migration } from 'kysely';

/**
 * Second factors (src/core/mfa): the authenticator app's secret (sealed) and
 * last used time step, recovery codes by hash, passkeys, the per-person chat
 * approval option, WebAuthn challenges and sign-ins waiting for their second step.
 */
export const mfaMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('mfa_totp')
      .addColumn('user_id', 'text', (c) => c.primaryKey())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('confirmed_at', 'bigint')
      .addColumn('last_step', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createTable('mfa_recovery_codes')
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('code_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addPrimaryKeyConstraint('mfa_recovery_codes_pk', ['user_id', 'code_hash'])
      .execute();
    await db.schema.createTable('mfa_passkeys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('counter', 'bigint', (c) => c.notNull())
      .addColumn('transports', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .execute();
    await db.schema.createIndex('mfa_passkeys_user').on('mfa_passkeys').column('user_id').execute();
    await db.schema.createTable('mfa_options')
      .addColumn('user_id', 'text', (c) => c.primaryKey())
      .addColumn('chat_approval', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createTable('mfa_challenges')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text')
      .addColumn('challenge', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createTable('mfa_pending')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('return_to', 'text', (c) => c.notNull())
      .addColumn('user_agent', 'text')
      .addColumn('ip', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint')
      .addColumn('approval_id', 'text', (c) => c.unique())
      .addColumn('approval_number', 'integer')
      .addColumn('approval_choices', 'text')
      .addColumn('approval_chat_id', 'text')
      .addColumn('approval_message_id', 'bigint')
      .addColumn('approval_state', 'text')
      .addColumn('approval_expires_at', 'bigint')
      .execute();
    await db.schema.createIndex('mfa_pending_expiry').on('mfa_pending').column('expires_at').execute();
  },
};
