import type { Kysely, Migration } from 'kysely';

/**
 * 0003_notify: the outbox. `notify_events` is the event log; a delivery row
 * per (endpoint, event) is the work queue; every try lands in
 * `webhook_attempts` (the delivery log). Subscriptions are rows so the append
 * can queue deliveries with one INSERT … SELECT inside the caller's transaction.
 */
export const notifyMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('notify_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('notify_events_created').on('notify_events').column('created_at').execute();

    await db.schema.createTable('webhook_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('url', 'text')
      .addColumn('chat_id', 'text')
      .addColumn('user_id', 'text')
      .addColumn('event_types', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('previous_secret', 'text')
      .addColumn('previous_secret_expires_at', 'bigint')
      .addColumn('ordered', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('disabled_at', 'bigint')
      .addColumn('disabled_reason', 'text')
      .addColumn('failing_since', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_endpoints_user').on('webhook_endpoints').column('user_id').execute();

    await db.schema.createTable('webhook_subscriptions')
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('endpoint_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_subscriptions_pk', ['event_type', 'endpoint_id'])
      .execute();

    await db.schema.createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('endpoint_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('retry_base', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('lease_until', 'bigint')
      .addColumn('lease_owner', 'text')
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('delivered_at', 'bigint')
      .execute();
    await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
    await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'status', 'created_at']).execute();
    await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').column('event_id').execute();

    await db.schema.createTable('webhook_attempts')
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('endpoint_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('error', 'text')
      .addColumn('response', 'text')
      .addColumn('ok', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
      .execute();
    await db.schema.createIndex('webhook_attempts_started').on('webhook_attempts').column('started_at').execute();
  },
};
