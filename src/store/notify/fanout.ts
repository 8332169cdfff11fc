import { CompiledQuery, type Kysely, type Migration } from 'kysely';
import type { NotifyEvent } from '../../core/notify/events.js';
import type { DB } from '../schema.js';
import type { TxScope } from '../transaction.js';

/**
 * Events appended outside a transaction (token.issued on the
 * client-credentials path, sign-in events) are group-committed as one row per
 * batch: `events` holds the batch's events as a JSON array. Before, each event
 * was a row and queued a delivery per subscribed endpoint at once: two rows
 * and six index entries per token, which cost half of client-credentials
 * throughput (docs/benchmarks.md, "Recording token.issued"). A batch is
 * fanned out into `notify_events` and their deliveries by whoever reads the
 * outbox next (the worker's claim, an admin listing). The batch row is
 * deleted only with or after its events and deliveries are written (in one
 * transaction on PostgreSQL, by statements that skip what is already there on
 * SQLite): an event is never lost between the two, nor queued twice.
 */
export interface NotifyBatchesTable {
  id: string;
  created_at: number;
  events: string; // JSON array of NotifyEvent
}

export type BatchDB = DB & { notify_event_batches: NotifyBatchesTable };

/** 0010_notify_batches: the batch rows. The primary key is their only index (ids sort by time). */
export const notifyBatchesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('notify_event_batches')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('events', 'text', (c) => c.notNull())
      .execute();
  },
};

const batches = (db: Kysely<DB>) => db as unknown as Kysely<BatchDB>;

/**
 * Writes a batch row by one statement: atomic and, outside a transaction,
 * committed when it returns. Compiled once (building and compiling the query
 * each time cost more than the row).
 */
export function batchWriter(db: Kysely<DB>): (id: string, events: NotifyEvent[]) => Promise<void> {
  const insert = batches(db).insertInto('notify_event_batches').values({ id: '', created_at: 0, events: '' }).compile();
  return async (id, events) => {
    await db.executeQuery({ ...insert, parameters: [id, events[0]!.createdAt, JSON.stringify(events)] });
  };
}

export const writeBatch = (db: Kysely<DB>, id: string, events: NotifyEvent[]): Promise<void> => batchWriter(db)(id, events);

/** Rows taken per round: a few thousand events at most (a batch holds up to 500). */
const ROWS_PER_ROUND = 8;

/**
 * Moves pending batches into `notify_events` and `webhook_deliveries`
 * (deliveries go to the endpoints subscribed at that moment, which is within
 * a sweep of the commit). `wait`: take rows another process is fanning out
 * only once it has finished (a reader that must see every committed event);
 * else skip them (the worker, which will see their deliveries anyway).
 * `maxEvents` bounds one call under a backlog. Returns how many events moved.
 */
export async function fanOut(db: Kysely<DB>, scope: TxScope | undefined, postgres: boolean, opts: { wait: boolean; maxEvents: number }): Promise<number> {
  let moved = 0;
  while (moved < opts.maxEvents) {
    let r: { rows: number; events: number };
    if (postgres) {
      // One statement: it is the look for rows too, so an empty outbox costs one round trip as before.
      const row = (await db.executeQuery<{ rows: number; events: number }>(CompiledQuery.raw(opts.wait ? PG_FAN_OUT_WAIT : PG_FAN_OUT_SKIP, [ROWS_PER_ROUND]))).rows[0];
      r = row ?? { rows: 0, events: 0 };
    } else {
      // Outside a transaction, a cheap look first: the worker calls this before every claim.
      if (!scope && !(await batches(db).selectFrom('notify_event_batches').select('id').limit(1).executeTakeFirst())) return moved;
      r = await fanOutSqlite(db);
    }
    moved += r.events;
    if (r.rows < ROWS_PER_ROUND) return moved;
  }
  return moved;
}

/**
 * PostgreSQL: a round of the fan-out as one statement, atomic without a
 * transaction of its own and one round trip: the batch rows are deleted
 * (locked first: `skip locked` for the worker, which leaves rows another
 * process is moving; a wait for a reader, which must see them), their events
 * expanded in the database (the `json` type keeps each event's `data` as
 * the text JSON.stringify wrote) and inserted, and their deliveries queued
 * as `appendEvents` queues them (src/store/notify/events-append.ts).
 */
const pgFanOut = (lock: string) => `
  with taken as (
    delete from notify_event_batches where id in (select id from notify_event_batches order by id limit $1 ${lock}) returning events
  ),
  x as (select j.value as v from taken, json_array_elements(taken.events::json) as j(value)),
  ev as (
    insert into notify_events (id, type, version, user_id, data, created_at)
    select v->>'id', v->>'type', (v->>'version')::int, v->>'userId', (v->'data')::text, (v->>'createdAt')::bigint from x
    returning id, type, user_id, created_at
  ),
  dl as (
    insert into webhook_deliveries (id, endpoint_id, event_id, status, attempts, retry_base, next_attempt_at, created_at, updated_at)
    select s.endpoint_id || ':' || v.id, s.endpoint_id, v.id, 'pending', 0, 0, v.created_at, v.created_at, v.created_at
    from ev v join webhook_subscriptions s on s.event_type = v.type or s.event_type = '*'
    join webhook_endpoints e on e.id = s.endpoint_id
    where e.disabled_at is null and (e.user_id is null or e.user_id = v.user_id)
    -- An endpoint subscribed to the type and to * matches twice: one delivery.
    on conflict (id) do nothing
    returning 1
  )
  select (select count(*) from taken)::int as rows, (select count(*) from ev)::int as events`;
const PG_FAN_OUT_WAIT = pgFanOut('for update');
const PG_FAN_OUT_SKIP = pgFanOut('for update skip locked');

/** The events of the batch rows named by `$1` (a JSON array of ids), one row each. */
const SQLITE_BATCH_EVENTS = 'notify_event_batches b, json_each(b.events) j where b.id in (select value from json_each(?))';
/** SQLite renders `data` back as compact JSON, keys in their order: what JSON.stringify wrote. */
const SQLITE_INSERT_EVENTS = `
  insert into notify_events (id, type, version, user_id, data, created_at)
  select j.value ->> '$.id', j.value ->> '$.type', j.value ->> '$.version', j.value ->> '$.userId', j.value -> '$.data', j.value ->> '$.createdAt'
  from ${SQLITE_BATCH_EVENTS}
  on conflict (id) do nothing`;
const SQLITE_INSERT_DELIVERIES = `
  insert into webhook_deliveries (id, endpoint_id, event_id, status, attempts, retry_base, next_attempt_at, created_at, updated_at)
  select s.endpoint_id || ':' || v.id, s.endpoint_id, v.id, 'pending', 0, 0, v.created_at, v.created_at, v.created_at
  from notify_events v join webhook_subscriptions s on s.event_type = v.type or s.event_type = '*'
  join webhook_endpoints e on e.id = s.endpoint_id
  where v.id in (select j.value ->> '$.id' from ${SQLITE_BATCH_EVENTS})
    and e.disabled_at is null and (e.user_id is null or e.user_id = v.user_id)
  on conflict (id) do nothing`;

/**
 * SQLite: no transaction around the steps, each one statement that holds
 * the write lock only while it runs (better-sqlite3 is synchronous: a
 * transaction held across awaits would stall another connection of the same
 * process for the whole busy timeout). The inserts skip rows already there,
 * so a row fanned out by two connections at once, or again after a crash
 * before its delete, yields each event and delivery once. The events are
 * expanded from the rows' JSON by the database (json_each): neither read
 * into JavaScript nor bound as thousands of parameters.
 */
async function fanOutSqlite(db: Kysely<DB>): Promise<{ rows: number; events: number }> {
  const taken = (await batches(db).selectFrom('notify_event_batches').select('id').orderBy('id').limit(ROWS_PER_ROUND).execute()).map((t) => t.id);
  if (taken.length === 0) return { rows: 0, events: 0 };
  const ids = JSON.stringify(taken);
  const inserted = await db.executeQuery(CompiledQuery.raw(SQLITE_INSERT_EVENTS, [ids]));
  await db.executeQuery(CompiledQuery.raw(SQLITE_INSERT_DELIVERIES, [ids]));
  await db.executeQuery(CompiledQuery.raw('delete from notify_event_batches where id in (select value from json_each(?))', [ids]));
  return { rows: taken.length, events: Number(inserted.numAffectedRows ?? 0) };
}
