import { sql, type Kysely } from 'kysely';
import type { AttemptOutcome, ClaimedDelivery, Delivery, DeliveryStatus, DeliveryStore, Attempt } from '../../core/notify/ports.js';
import type { DB } from '../schema.js';
import { claimDue } from './claim.js';
import { completeDeliveredSqlite, completeInOneStatement } from './complete.js';
import { deliveryId, toAttempt, toDelivery } from './codec.js';
import { appendEvents } from './events-append.js';
import { within, type TxScope } from '../transaction.js';
import type { NotifyShared } from './shared.js';

export class SqlDeliveryStore implements DeliveryStore {
  constructor(private readonly db: Kysely<DB>, private readonly shared: NotifyShared, private readonly scope?: TxScope) {}

  async claim(now: number, limit: number, leaseMs: number, owner: string): Promise<ClaimedDelivery[]> {
    // Events group-committed as one row per batch get their deliveries here (src/store/notify/fanout.ts).
    const settle = () => this.shared.settle(this.db, this.scope, false);
    const claim = (n = limit) => claimDue(this.db, this.shared.postgres, this.shared.secrets, now, n, now + leaseMs, owner);
    let result: Awaited<ReturnType<typeof claim>>;
    if (this.shared.postgres && !this.scope) {
      // Side by side on two pooled connections: the claim takes what was queued before, and a fan-out that
      // queued deliveries wakes the worker for the next claim. A round trip (and a commit) less per claim.
      const [settled, claimed] = await Promise.allSettled([settle(), claim()]);
      if (claimed.status === 'rejected') throw claimed.reason;
      // The claimed deliveries are returned whatever the fan-out did (its next try reports a lasting failure).
      if (settled.status === 'rejected' && claimed.value.claimed.length === 0) throw settled.reason;
      result = claimed.value;
      // What the fan-out moved meanwhile was committed before this claim: claim it too, so a claim sees
      // every event committed before it (the outbox conformance suite), at the cost of a round trip only then.
      if (settled.status === 'fulfilled' && settled.value > 0 && result.claimed.length < limit) {
        const more = await claim(limit - result.claimed.length);
        result = { claimed: [...result.claimed, ...more.claimed], orphans: [...result.orphans, ...more.orphans] };
      }
    } else {
      await settle();
      result = await claim();
    }
    const { claimed, orphans } = result;
    if (orphans.length) {
      await this.db.updateTable('webhook_deliveries').set({ status: 'failed', last_error: 'event or endpoint deleted', lease_until: null, lease_owner: null, updated_at: now })
        .where('id', 'in', orphans).execute();
    }
    return claimed;
  }

  async renew(deliveries: { endpointId: string; eventId: string }[], owner: string, until: number): Promise<void> {
    if (deliveries.length === 0) return;
    await this.db.updateTable('webhook_deliveries').set({ lease_until: until })
      .where('id', 'in', deliveries.map((d) => deliveryId(d.endpointId, d.eventId)))
      .where('lease_owner', '=', owner).where('status', '=', 'pending')
      .execute();
  }

  async complete(o: AttemptOutcome, now: number): Promise<void> {
    await this.completeMany([o], now);
  }

  async completeMany(outcomes: AttemptOutcome[], now: number): Promise<void> {
    if (outcomes.length === 0) return;
    if (this.shared.postgres && !outcomes.some((o) => o.disable)) return completeInOneStatement(this.db, outcomes, now);
    if (!this.shared.postgres && outcomes.every((o) => o.next.status === 'delivered' && o.endpointOk && !o.disable)) {
      return within(this.db, this.scope, (trx) => completeDeliveredSqlite(trx, outcomes, now));
    }
    const byId = <T extends { attempt: { endpointId: string; eventId: string } }>(x: T, y: T) =>
      deliveryId(x.attempt.endpointId, x.attempt.eventId) < deliveryId(y.attempt.endpointId, y.attempt.eventId) ? -1 : 1;
    // Endpoint rows first (in id order), then the deliveries, then the log: one lock
    // order for every completion, so a worker disabling an endpoint never deadlocks
    // with another one recording attempts (PostgreSQL).
    await within(this.db, this.scope, async (trx, scope) => {
      const ok = [...new Set(outcomes.filter((o) => o.endpointOk).map((o) => o.attempt.endpointId))].sort();
      if (ok.length) {
        await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', 'in', ok).where('failing_since', 'is not', null).execute();
      }
      const failing = new Map<string, number>();
      for (const o of outcomes) if (!o.endpointOk) failing.set(o.attempt.endpointId, Math.min(failing.get(o.attempt.endpointId) ?? Infinity, o.attempt.startedAt));
      for (const [id, at] of [...failing].sort()) {
        await trx.updateTable('webhook_endpoints').set({ failing_since: at }).where('id', '=', id).where('failing_since', 'is', null).execute();
      }
      for (const o of outcomes.filter((x) => x.disable).sort(byId)) {
        const r = await trx.updateTable('webhook_endpoints').set({ disabled_at: now, disabled_reason: o.disable!.reason, updated_at: now })
          .where('id', '=', o.attempt.endpointId).where('disabled_at', 'is', null).executeTakeFirst();
        // Only the worker that disabled it raises webhook.disabled.
        if (Number(r.numUpdatedRows) > 0) {
          await failPendingOn(trx, o.attempt.endpointId, `endpoint disabled: ${o.disable!.reason}`, now);
          await appendEvents(trx, [o.disable!.event], this.shared.postgres);
          scope.afterCommit(this.shared.appended);
          scope.afterCommit(this.shared.invalidate);
        }
      }

      // Successes with the same status in one statement: the common case at volume.
      const delivered = new Map<number | null, string[]>();
      for (const o of outcomes.filter((x) => x.next.status === 'delivered').sort(byId)) {
        const ids = delivered.get(o.attempt.statusCode) ?? [];
        ids.push(deliveryId(o.attempt.endpointId, o.attempt.eventId));
        delivered.set(o.attempt.statusCode, ids);
      }
      for (const [status, ids] of delivered) {
        await trx.updateTable('webhook_deliveries').set({
          status: 'delivered', attempts: sql<number>`attempts + 1`, lease_until: null, lease_owner: null, last_status: status, last_error: null,
          updated_at: now, delivered_at: now,
        }).where('id', 'in', ids).execute();
      }
      for (const o of outcomes.filter((x) => x.next.status !== 'delivered').sort(byId)) {
        const a = o.attempt;
        const id = deliveryId(a.endpointId, a.eventId);
        const common = { attempts: a.attempt, lease_until: null, lease_owner: null, last_status: a.statusCode, last_error: a.error, updated_at: now };
        if (o.next.status === 'failed') {
          await trx.updateTable('webhook_deliveries').set({ ...common, status: 'failed' }).where('id', '=', id).execute();
        } else if (o.next.status === 'pending') {
          // A delivery dead-lettered meanwhile (its endpoint was disabled) stays so.
          await trx.updateTable('webhook_deliveries').set({ ...common, status: 'pending', next_attempt_at: o.next.at })
            .where('id', '=', id).where('status', '=', 'pending').execute();
        }
      }
      await trx.insertInto('webhook_attempts').values(outcomes.map(({ attempt: a }) => ({
        delivery_id: deliveryId(a.endpointId, a.eventId), attempt: a.attempt, endpoint_id: a.endpointId, event_id: a.eventId, started_at: a.startedAt,
        duration_ms: a.durationMs, status_code: a.statusCode, error: a.error, response: a.response, ok: a.ok ? 1 : 0,
      }))).onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing()).execute();
    });
  }

  async get(endpointId: string, eventId: string): Promise<Delivery | undefined> {
    await this.shared.settle(this.db, this.scope, true);
    const r = await this.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', deliveryId(endpointId, eventId)).executeTakeFirst();
    return r && toDelivery(r);
  }

  async list(endpointId: string, q: { status?: DeliveryStatus; since?: number; limit: number }): Promise<Delivery[]> {
    await this.shared.settle(this.db, this.scope, true);
    let query = this.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId);
    if (q.status) query = query.where('status', '=', q.status);
    if (q.since !== undefined) query = query.where('created_at', '>=', q.since);
    return (await query.orderBy('created_at', 'desc').orderBy('event_id', 'desc').limit(q.limit).execute()).map(toDelivery);
  }

  async attempts(endpointId: string, eventId: string): Promise<Attempt[]> {
    return (await this.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId(endpointId, eventId)).orderBy('attempt').execute()).map(toAttempt);
  }

  async resend(endpointId: string, eventId: string, now: number): Promise<boolean> {
    await this.shared.settle(this.db, this.scope, true);
    const event = await this.db.selectFrom('notify_events').select('created_at').where('id', '=', eventId).executeTakeFirst();
    if (!event) return false;
    await this.db.insertInto('webhook_deliveries').values({
      id: deliveryId(endpointId, eventId), endpoint_id: endpointId, event_id: eventId, status: 'pending', attempts: 0, retry_base: 0,
      next_attempt_at: now, created_at: event.created_at, updated_at: now,
    }).onConflict((oc) => oc.column('id').doUpdateSet({
      status: 'pending', retry_base: sql<number>`webhook_deliveries.attempts`, next_attempt_at: now, lease_until: null, lease_owner: null, updated_at: now,
    })).execute();
    this.wake();
    return true;
  }

  async replayFailed(endpointId: string, since: number, now: number): Promise<number> {
    const r = await this.db.updateTable('webhook_deliveries')
      .set({ status: 'pending', retry_base: sql<number>`attempts`, next_attempt_at: now, lease_until: null, lease_owner: null, updated_at: now })
      .where('endpoint_id', '=', endpointId).where('status', '=', 'failed').where('created_at', '>=', since)
      .executeTakeFirst();
    this.wake();
    return Number(r.numUpdatedRows);
  }

  async failPending(endpointId: string, reason: string, now: number): Promise<number> {
    return failPendingOn(this.db, endpointId, reason, now);
  }

  /** Queued work outside an append also wakes the worker (after commit inside a transaction). */
  private wake(): void {
    if (this.scope) this.scope.afterCommit(this.shared.appended);
    else this.shared.appended();
  }
}

async function failPendingOn(db: Kysely<DB>, endpointId: string, reason: string, now: number): Promise<number> {
  const r = await db.updateTable('webhook_deliveries').set({ status: 'failed', last_error: reason, lease_until: null, lease_owner: null, updated_at: now })
    .where('endpoint_id', '=', endpointId).where('status', '=', 'pending').executeTakeFirst();
  return Number(r.numUpdatedRows);
}
