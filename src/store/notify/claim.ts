import { CompiledQuery, type Kysely } from 'kysely';
import type { SecretBox } from '../../core/secret-box.js';
import type { ClaimedDelivery, Endpoint } from '../../core/notify/ports.js';
import type { DB, NotifyEventsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from '../schema.js';
import { toDelivery, toEndpoint, toEvent } from './codec.js';

/**
 * The claim, written once as SQL (the worker runs it several times a second
 * under load; building and compiling it through the query builder each time
 * cost more than running it). Due: pending, its time come, not leased by a
 * live worker, its endpoint enabled, and for an ordered endpoint its oldest
 * pending delivery only. `$1` now, `$2` how many, `$3` lease end, `$4` owner.
 */
const DUE = (limit: string) => `
  select d.id from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
  where d.status = 'pending' and d.next_attempt_at <= $1
    and (d.lease_until is null or d.lease_until <= $1)
    and e.disabled_at is null
    and (e.ordered = 0 or not exists (
      select 1 from webhook_deliveries p
      where p.endpoint_id = d.endpoint_id and p.status = 'pending'
        and (p.created_at < d.created_at or (p.created_at = d.created_at and p.event_id < d.event_id))))
  order by d.next_attempt_at
  limit ${limit}`;

const EVENT_COLUMNS = 'v.type as ev_type, v.version as ev_version, v.user_id as ev_user_id, v.data as ev_data, v.created_at as ev_created_at';
const ENDPOINT_COLUMNS = ['kind', 'url', 'chat_id', 'user_id', 'event_types', 'description', 'secret', 'previous_secret', 'previous_secret_expires_at',
  'ordered', 'disabled_at', 'disabled_reason', 'failing_since', 'created_at', 'updated_at'].map((c) => `e.${c} as ep_${c}`).join(', ');

/**
 * PostgreSQL: one round trip. The rows are locked as they are chosen and
 * rows another worker is claiming are skipped (`skip locked`); the lease is
 * set, and each row comes back with its event and endpoint (a deleted one
 * shows as null and the delivery is dead-lettered). The update and the
 * event's read go by primary key (`= any(array(…))`, lateral): joined to the
 * CTE, the planner scanned the whole table for them, a cost that grew with
 * the delivery log (43 ms a claim at 20,000 rows).
 */
export const PG_CLAIM = `
  with due as (${DUE('$2')} for update of d skip locked),
  c as (update webhook_deliveries w set lease_until = $3, lease_owner = $4 where w.id = any(array(select id from due)) returning w.*)
  select c.*, v.id as ev_id, ${EVENT_COLUMNS}, e.id as ep_id, ${ENDPOINT_COLUMNS}
  from c
  left join lateral (select * from notify_events n where n.id = c.event_id) v on true
  left join lateral (select * from webhook_endpoints x where x.id = c.endpoint_id) e on true`;

/** better-sqlite3 binds `?` in order: the text with `$n` turned into `?`, and which parameter each one takes. */
function sqlite(text: string): { text: string; order: number[] } {
  const order: number[] = [];
  return { text: text.replace(/\$(\d)/g, (_, n: string) => (order.push(Number(n) - 1), '?')), order };
}
const SQLITE_CLAIM = sqlite(`update webhook_deliveries set lease_until = $3, lease_owner = $4 where id in (${DUE('$2')}) returning *`);
const SQLITE_EVENTS = `select v.id as ev_id, ${EVENT_COLUMNS} from notify_events v where v.id in (select value from json_each(?))`;
const SQLITE_ENDPOINTS = `select e.id as ep_id, ${ENDPOINT_COLUMNS} from webhook_endpoints e where e.id in (select value from json_each(?))`;

type Row = WebhookDeliveriesTable & { [k: string]: unknown };

function eventOf(r: Record<string, unknown>): NotifyEventsTable {
  return { id: r.ev_id as string, type: r.ev_type as string, version: r.ev_version as number, user_id: r.ev_user_id as string | null, data: r.ev_data as string, created_at: Number(r.ev_created_at) };
}

function endpointOf(r: Record<string, unknown>): WebhookEndpointsTable {
  const out: Record<string, unknown> = { id: r.ep_id };
  for (const [k, v] of Object.entries(r)) if (k.startsWith('ep_')) out[k.slice(3)] = v;
  return out as unknown as WebhookEndpointsTable;
}

/** Claims up to `limit` due deliveries; those whose event or endpoint is gone are returned apart, to be dead-lettered. */
export async function claimDue(db: Kysely<DB>, postgres: boolean, secrets: SecretBox, now: number, limit: number, leaseUntil: number, owner: string):
Promise<{ claimed: ClaimedDelivery[]; orphans: string[] }> {
  const params = [now, limit, leaseUntil, owner];
  const rows = (await db.executeQuery<Row>(postgres ? CompiledQuery.raw(PG_CLAIM, params) : CompiledQuery.raw(SQLITE_CLAIM.text, SQLITE_CLAIM.order.map((i) => params[i])))).rows;
  if (rows.length === 0) return { claimed: [], orphans: [] };
  let events: Map<string, Record<string, unknown>>;
  let endpointRows: Map<string, Record<string, unknown>>;
  if (postgres) {
    events = new Map(rows.filter((r) => r.ev_id !== null).map((r) => [r.ev_id as string, r]));
    endpointRows = new Map(rows.filter((r) => r.ep_id !== null).map((r) => [r.ep_id as string, r]));
  } else {
    const list = (key: 'event_id' | 'endpoint_id') => JSON.stringify([...new Set(rows.map((r) => r[key]))]);
    events = new Map((await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(SQLITE_EVENTS, [list('event_id')]))).rows.map((r) => [r.ev_id as string, r]));
    endpointRows = new Map((await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(SQLITE_ENDPOINTS, [list('endpoint_id')]))).rows.map((r) => [r.ep_id as string, r]));
  }
  // One decoded event and endpoint per id: the batch's deliveries of one event share its body, of one endpoint its secret.
  const decodedEvents = new Map([...events].map(([id, r]) => [id, toEvent(eventOf(r))]));
  const decodedEndpoints = new Map<string, Endpoint>([...endpointRows].map(([id, r]) => [id, toEndpoint(endpointOf(r), secrets)]));
  const claimed: ClaimedDelivery[] = [];
  const orphans: string[] = [];
  for (const r of rows) {
    const event = decodedEvents.get(r.event_id);
    const endpoint = decodedEndpoints.get(r.endpoint_id);
    if (event && endpoint) claimed.push({ delivery: toDelivery(r), event, endpoint });
    else orphans.push(r.id);
  }
  return { claimed, orphans };
}
