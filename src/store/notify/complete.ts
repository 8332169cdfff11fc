import { CompiledQuery, type Kysely } from 'kysely';
import type { AttemptOutcome } from '../../core/notify/ports.js';
import type { DB } from '../schema.js';
import { deliveryId } from './codec.js';

/**
 * PostgreSQL: a batch of attempts with no endpoint to disable, recorded by
 * one statement (atomic without a transaction of its own, one round trip
 * and one commit): the endpoints' `failing_since`, each delivery's next
 * state, and the attempts in the log. The attempts come as arrays (one
 * statement text whatever the batch size, so one prepared statement).
 *
 * Endpoint rows are locked in id order (`order by id for update`), the one
 * lock order of every completion, and only those whose `failing_since`
 * changes or may change: a success locks its endpoint only while that is
 * set, so completions at volume do not queue on the endpoint row.
 */
export const PG_COMPLETE = `
  with o as (
    select * from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[], $6::int[], $7::int[], $8::text[], $9::text[], $10::int[], $11::text[], $12::bigint[])
      as o(id, endpoint_id, event_id, attempt, started_at, duration_ms, status_code, error, response, ok, next, next_at)
  ),
  t as (select * from unnest($13::text[], $14::bool[], $15::bigint[]) as t(id, cleared, failed_at)),
  locked as (
    select e.id from webhook_endpoints e join t on t.id = e.id
    where e.failing_since is not null or t.failed_at is not null
    order by e.id for update of e
  ),
  ep as (
    update webhook_endpoints e
    set failing_since = case when t.failed_at is null then null when t.cleared then t.failed_at else coalesce(e.failing_since, t.failed_at) end
    from t where e.id = t.id and e.id in (select id from locked)
    returning 1
  ),
  d as (
    update webhook_deliveries w set
      status = o.next,
      attempts = case when o.next = 'delivered' then w.attempts + 1 else o.attempt end,
      lease_until = null, lease_owner = null, last_status = o.status_code,
      last_error = case when o.next = 'delivered' then null else o.error end, updated_at = $16,
      delivered_at = case when o.next = 'delivered' then $16 else w.delivered_at end,
      next_attempt_at = case when o.next = 'pending' then o.next_at else w.next_attempt_at end
    from o
    -- A delivery dead-lettered meanwhile (its endpoint was disabled) is not made pending again.
    where w.id = o.id and (o.next <> 'pending' or w.status = 'pending')
    returning 1
  )
  insert into webhook_attempts (delivery_id, attempt, endpoint_id, event_id, started_at, duration_ms, status_code, error, response, ok)
  select id, attempt, endpoint_id, event_id, started_at, duration_ms, status_code, error, response, ok from o
  on conflict (delivery_id, attempt) do nothing`;

/**
 * The same outcome as the transaction of `completeMany` for batches without
 * a disable: an endpoint with a success and no failure in the batch is
 * cleared; one with failures gets the earliest failure's start, after a
 * clear when the batch also has a success, else only when unset.
 */
export async function completeInOneStatement(db: Kysely<DB>, outcomes: AttemptOutcome[], now: number): Promise<void> {
  const cols: unknown[][] = Array.from({ length: 12 }, () => []);
  const endpoints = new Map<string, { cleared: boolean; failedAt: number | null }>();
  for (const o of outcomes) {
    const a = o.attempt;
    const values = [deliveryId(a.endpointId, a.eventId), a.endpointId, a.eventId, a.attempt, a.startedAt, a.durationMs, a.statusCode, a.error, a.response,
      a.ok ? 1 : 0, o.next.status, o.next.status === 'pending' ? o.next.at : null];
    values.forEach((v, i) => cols[i]!.push(v));
    const e = endpoints.get(a.endpointId) ?? { cleared: false, failedAt: null };
    if (o.endpointOk) e.cleared = true;
    else e.failedAt = Math.min(e.failedAt ?? Infinity, a.startedAt);
    endpoints.set(a.endpointId, e);
  }
  const ids = [...endpoints.keys()];
  await db.executeQuery(CompiledQuery.raw(PG_COMPLETE, [...cols, ids, ids.map((id) => endpoints.get(id)!.cleared), ids.map((id) => endpoints.get(id)!.failedAt), now]));
}

const SQLITE_CLEAR_ENDPOINTS = 'update webhook_endpoints set failing_since = null where id in (select value from json_each(?)) and failing_since is not null';
const SQLITE_DELIVERED = `
  update webhook_deliveries set status = 'delivered', attempts = attempts + 1, lease_until = null, lease_owner = null, last_status = ?, last_error = null,
    updated_at = ?, delivered_at = ?
  where id in (select value from json_each(?))`;
const SQLITE_ATTEMPTS = `
  insert into webhook_attempts (delivery_id, attempt, endpoint_id, event_id, started_at, duration_ms, status_code, error, response, ok)
  select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9
  from json_each(?) where true
  on conflict (delivery_id, attempt) do nothing`;

/**
 * SQLite: a batch of successes only (the common case at volume), inside the
 * caller's transaction, by statements written once whatever the batch size
 * (the lists go as JSON): the same writes as the general path (endpoints
 * cleared, deliveries delivered per status code, the attempts logged),
 * without building and compiling them per batch.
 */
export async function completeDeliveredSqlite(trx: Kysely<DB>, outcomes: AttemptOutcome[], now: number): Promise<void> {
  const run = (text: string, params: unknown[]) => trx.executeQuery(CompiledQuery.raw(text, params));
  await run(SQLITE_CLEAR_ENDPOINTS, [JSON.stringify([...new Set(outcomes.map((o) => o.attempt.endpointId))].sort())]);
  const byStatus = new Map<number | null, string[]>();
  for (const { attempt: a } of outcomes) {
    const ids = byStatus.get(a.statusCode) ?? [];
    ids.push(deliveryId(a.endpointId, a.eventId));
    byStatus.set(a.statusCode, ids);
  }
  for (const [status, ids] of byStatus) await run(SQLITE_DELIVERED, [status, now, now, JSON.stringify(ids.sort())]);
  await run(SQLITE_ATTEMPTS, [JSON.stringify(outcomes.map(({ attempt: a }) => [deliveryId(a.endpointId, a.eventId), a.attempt, a.endpointId, a.eventId,
    a.startedAt, a.durationMs, a.statusCode, a.error, a.response, a.ok ? 1 : 0]))]);
}
