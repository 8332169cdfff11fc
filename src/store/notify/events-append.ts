import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { NotifyEvent } from '../../core/notify/events.js';
import type { DB } from '../schema.js';

const row = (e: NotifyEvent) => ({
  id: e.id, type: e.type, version: e.version, user_id: e.userId, data: JSON.stringify(e.data), created_at: e.createdAt,
});

const DELIVERY_COLUMNS = ['id', 'endpoint_id', 'event_id', 'status', 'attempts', 'retry_base', 'next_attempt_at', 'created_at', 'updated_at'] as const;

/**
 * One pending delivery per (event, enabled endpoint subscribed to its type or
 * `*`); a person's own chat (endpoint user_id set) gets only the events
 * about them. `v` is the table or CTE holding the new events.
 */
function deliveriesOf<V extends 'notify_events as v' | 'v'>(eb: ExpressionBuilder<DB & { v: DB['notify_events'] }, never>, from: V) {
  return eb.selectFrom(from as 'v')
    .innerJoin('webhook_subscriptions as s', (j) => j.on((o) => o.or([o('s.event_type', '=', o.ref('v.type')), o('s.event_type', '=', '*')])))
    .innerJoin('webhook_endpoints as e', 'e.id', 's.endpoint_id')
    .select([
      sql<string>`s.endpoint_id || ':' || v.id`.as('id'),
      's.endpoint_id',
      'v.id as event_id',
      sql<string>`'pending'`.as('status'),
      sql<number>`0`.as('attempts'),
      sql<number>`0`.as('retry_base'),
      'v.created_at as next_attempt_at',
      'v.created_at',
      'v.created_at as updated_at',
    ])
    .where('e.disabled_at', 'is', null)
    .where((w) => w.or([w('e.user_id', 'is', null), w('e.user_id', '=', w.ref('v.user_id'))]));
}

/**
 * Inserts the events and queues their deliveries, however many events: on
 * PostgreSQL in one statement (the events' INSERT … RETURNING feeds the
 * deliveries' INSERT … SELECT), atomic without a transaction of its own; on
 * SQLite in two, inside the caller's transaction. `again` (SQLite): some
 * of the events may be there already, with their deliveries (a batch row
 * fanned out twice, src/store/notify/fanout.ts).
 */
export async function appendEvents(db: Kysely<DB>, events: NotifyEvent[], postgres: boolean, again = false): Promise<void> {
  if (events.length === 0) return;
  if (postgres) {
    await db.with('v', (d) => d.insertInto('notify_events').values(events.map(row)).returningAll())
      .insertInto('webhook_deliveries')
      .columns(DELIVERY_COLUMNS)
      .expression((eb) => deliveriesOf(eb as never, 'v'))
      // An endpoint subscribed to the type and to `*` matches twice: one delivery.
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    return;
  }
  let insert = db.insertInto('notify_events').values(events.map(row));
  if (again) insert = insert.onConflict((oc) => oc.column('id').doNothing());
  await insert.execute();
  await db.insertInto('webhook_deliveries')
    .columns(DELIVERY_COLUMNS)
    .expression((eb) => deliveriesOf(eb as never, 'notify_events as v').where('v.id', 'in', events.map((e) => e.id)))
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}
