import type { Kysely } from 'kysely';
import type { NotifyEvent } from '../../core/notify/events.js';
import type { DeliveryStore, EndpointStore, EventStore } from '../../core/notify/ports.js';
import { MAIL_EVENT_TYPE } from '../../core/mail/ports.js';
import type { DB } from '../schema.js';
import { toEvent } from './codec.js';
import { appendEvents } from './events-append.js';
import { SqlDeliveryStore } from './deliveries.js';
import { SqlEndpointStore } from './endpoints.js';
import type { TxScope } from '../transaction.js';
import type { NotifyShared } from './shared.js';

export class SqlEventStore implements EventStore {
  readonly endpoints: EndpointStore;
  readonly deliveries: DeliveryStore;

  /** `scope` is set for the stores of one transaction: the wake-up waits for its commit. */
  constructor(private readonly db: Kysely<DB>, private readonly shared: NotifyShared, private readonly scope?: TxScope) {
    this.endpoints = new SqlEndpointStore(db, shared, scope);
    this.deliveries = new SqlDeliveryStore(db, shared, scope);
  }

  /**
   * In a transaction, part of it; else group-committed with the appends of
   * concurrent requests, the batch's own promise returned as it is (not
   * wrapped by an async function: the token path waits on it per token).
   */
  append(event: NotifyEvent): Promise<void> {
    if (!this.scope) return this.shared.batch.submit(event);
    return this.appendInTransaction(this.scope, event);
  }

  private async appendInTransaction(scope: TxScope, event: NotifyEvent): Promise<void> {
    await appendEvents(this.db, [event], this.shared.postgres);
    scope.afterCommit(this.shared.appended);
  }

  subscribed(type: string): boolean {
    return this.shared.subscribed(type);
  }

  hasSubscriber(type: string): boolean | Promise<boolean> {
    return this.shared.hasSubscriber(type, this.db);
  }

  async get(id: string): Promise<NotifyEvent | undefined> {
    await this.shared.settle(this.db, this.scope, true);
    const r = await this.db.selectFrom('notify_events').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toEvent(r);
  }

  async list(q: { type?: string; since?: number; limit: number }): Promise<NotifyEvent[]> {
    await this.shared.settle(this.db, this.scope, true);
    let query = this.db.selectFrom('notify_events').selectAll();
    // E-mails are outbox rows too, but no event: the console's mail page lists them (src/core/mail/ports.ts).
    query = q.type ? query.where('type', '=', q.type) : query.where('type', '!=', MAIL_EVENT_TYPE);
    if (q.since !== undefined) query = query.where('created_at', '>=', q.since);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
    return rows.map(toEvent);
  }

  onAppended(listener: () => void): () => void {
    return this.shared.onAppended(listener);
  }

  async purge(before: number): Promise<number> {
    let n = 0;
    const count = (r: { numDeletedRows: bigint }) => (n += Number(r.numDeletedRows));
    count(await this.db.deleteFrom('webhook_attempts').where('started_at', '<', before).executeTakeFirst());
    count(await this.db.deleteFrom('webhook_deliveries').where('status', '!=', 'pending').where('updated_at', '<', before).executeTakeFirst());
    count(await this.db.deleteFrom('notify_events').where('created_at', '<', before)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'notify_events.id'))))
      .executeTakeFirst());
    return n;
  }
}
