import { sql, type Kysely } from 'kysely';
import type { NotifyEvent } from '../../core/notify/events.js';
import type { DB } from '../schema.js';

/**
 * Inserts the event and, in the same statement sequence (the caller's
 * transaction), one pending delivery per enabled endpoint subscribed to its
 * type; a person's own chat gets only the events about them.
 */
export async function appendEvent(db: Kysely<DB>, e: NotifyEvent): Promise<void> {
  await db.insertInto('notify_events').values({
    id: e.id, type: e.type, version: e.version, user_id: e.userId, data: JSON.stringify(e.data), created_at: e.createdAt,
  }).execute();
  await db.insertInto('webhook_deliveries')
    .columns(['id', 'endpoint_id', 'event_id', 'status', 'attempts', 'retry_base', 'next_attempt_at', 'created_at', 'updated_at'])
    .expression((eb) => eb.selectFrom('webhook_subscriptions as s').innerJoin('webhook_endpoints as e', 'e.id', 's.endpoint_id')
      .select([
        sql<string>`s.endpoint_id || ${`:${e.id}`}`.as('id'),
        's.endpoint_id',
        sql<string>`cast(${e.id} as text)`.as('event_id'),
        sql<string>`'pending'`.as('status'),
        sql<number>`0`.as('attempts'),
        sql<number>`0`.as('retry_base'),
        sql<number>`cast(${e.createdAt} as bigint)`.as('next_attempt_at'),
        sql<number>`cast(${e.createdAt} as bigint)`.as('created_at'),
        sql<number>`cast(${e.createdAt} as bigint)`.as('updated_at'),
      ])
      .where('s.event_type', 'in', [e.type, '*'])
      .where('e.disabled_at', 'is', null)
      .where((w) => (e.userId === null ? w('e.user_id', 'is', null) : w.or([w('e.user_id', 'is', null), w('e.user_id', '=', e.userId)]))))
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}
