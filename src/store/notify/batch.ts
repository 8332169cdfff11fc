import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';
import { newId, type NotifyEvent } from '../../core/notify/events.js';
import type { DB } from '../schema.js';
import { batchWriter } from './fanout.js';

/**
 * 0019_notify_batches_lz4: on PostgreSQL, a batch row of more than ~2 KB is
 * compressed into TOAST on insert, by pglz unless told otherwise; lz4 does it
 * in about 70% of the backend CPU per commit (measured: 12 token.issued
 * events, 3.9 KB, 150 → 110 µs per insert). The rows live until the next
 * fan-out, so the ratio matters less than the cost. Servers built without lz4
 * keep pglz.
 */
export const notifyBatchesLz4Migration: Migration = {
  async up(db: Kysely<unknown>) {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    const { rows } = await sql<{ lz4: boolean }>`select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`.execute(db);
    if (rows[0]?.lz4) await sql`alter table notify_event_batches alter column events set compression lz4`.execute(db);
  },
};

/** Events per batch row: a row of a few hundred kilobytes at most. */
const MAX_BATCH = 500;

interface Waiting {
  event: NotifyEvent;
  done(err?: unknown): void;
}

/**
 * Group commit for events appended outside a transaction (token.issued on the
 * client-credentials path, sign-in events): the appends that arrive while a
 * batch is being written go into the next one, written as one row by one
 * statement (src/store/notify/fanout.ts fans it out later). Each caller's
 * promise settles once its own event has committed, so an answer that follows
 * it is never sent before its event is stored. What this saves is the commit
 * (a WAL write on SQLite, an fsync on PostgreSQL) and the rows and index
 * entries of each event and its deliveries.
 */
export class AppendBatcher {
  private queue: Waiting[] = [];
  private scheduled = false;
  private inFlight = 0;

  /** Batches written at once: SQLite has one connection; on PostgreSQL the commit's wait for the disk dominates, so several overlap. */
  private readonly maxInFlight: number;

  private readonly writeRow: (id: string, events: NotifyEvent[]) => Promise<void>;

  constructor(db: Kysely<DB>, private readonly committed: () => void, postgres: boolean) {
    this.maxInFlight = postgres ? 4 : 1;
    this.writeRow = batchWriter(db);
  }

  append(event: NotifyEvent): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ event, done: (err) => (err === undefined ? resolve() : reject(err)) });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // After this turn of the event loop: the requests read in the same turn share one commit.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, MAX_BATCH);
    if (batch.length === 0) return;
    this.inFlight++;
    this.schedule();
    try {
      await this.write(batch.map((w) => w.event));
      for (const w of batch) w.done();
    } catch (err) {
      // One row for all: nothing in one event can fail it alone; the database failed (a 503 for each request).
      for (const w of batch) w.done(err ?? new Error('append failed'));
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }

  private async write(events: NotifyEvent[]): Promise<void> {
    await this.writeRow(newId('bat_', events[0]!.createdAt), events);
    this.committed();
  }
}
