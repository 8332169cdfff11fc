import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';
import { newId, type NotifyEvent } from '../../core/notify/events.js';

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

/** One batch row being gathered or waiting to be written: its events, and the one promise all their appenders wait on. */
class Batch {
  readonly events: NotifyEvent[] = [];
  readonly committed: Promise<void>;
  settle!: (err?: unknown) => void;

  constructor() {
    this.committed = new Promise<void>((resolve, reject) => {
      this.settle = (err) => (err === undefined ? resolve() : reject(err));
    });
    // Every appender awaits it; this only keeps a failure with no appender left from being unhandled.
    this.committed.catch(() => undefined);
  }
}

/**
 * Group commit for events appended outside a transaction (token.issued on the
 * client-credentials path, sign-in events): the appends that arrive while a
 * batch is being written go into the next one, written as one row by one
 * statement (src/store/notify/fanout.ts fans it out later). Each caller's
 * promise settles once its own event has committed, so an answer that follows
 * it is never sent before its event is stored. What this saves is the commit
 * (a WAL write on SQLite, an fsync on PostgreSQL) and the rows and index
 * entries of each event and its deliveries. The appenders of one batch share
 * one promise: a promise and two closures per event were a good part of the
 * Node CPU that recording a token.issued costs.
 */
export class AppendBatcher {
  /** Gathering appends; once written or full it is replaced. */
  private open: Batch | undefined;
  /** Batches that reached MAX_BATCH and wait for a free slot, oldest first. */
  private readonly full: Batch[] = [];
  private scheduled = false;
  private inFlight = 0;

  /** Batches written at once: SQLite has one connection; on PostgreSQL the commit's wait for the disk dominates, so several overlap. */
  private readonly maxInFlight: number;

  /** `writeRow` writes one batch row and resolves once it is committed (batchWriter, src/store/notify/fanout.ts). */
  constructor(
    private readonly writeRow: (id: string, events: NotifyEvent[]) => Promise<void>,
    private readonly committed: () => void,
    postgres: boolean,
  ) {
    this.maxInFlight = postgres ? 4 : 1;
  }

  append(event: NotifyEvent): Promise<void> {
    let batch = this.open;
    if (batch === undefined) batch = this.open = new Batch();
    batch.events.push(event);
    if (batch.events.length >= MAX_BATCH) {
      this.full.push(batch);
      this.open = undefined;
    }
    if (!this.scheduled) this.schedule();
    return batch.committed;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || (this.open === undefined && this.full.length === 0)) return;
    this.scheduled = true;
    // After this turn of the event loop: the requests read in the same turn share one commit.
    setImmediate(this.flushNow);
  }

  private readonly flushNow = (): void => {
    this.scheduled = false;
    void this.flush();
  };

  private async flush(): Promise<void> {
    let batch = this.full.shift();
    if (batch === undefined) {
      batch = this.open;
      this.open = undefined;
    }
    if (batch === undefined) return;
    this.inFlight++;
    this.schedule();
    try {
      await this.writeRow(newId('bat_', batch.events[0]!.createdAt), batch.events);
      this.committed();
      batch.settle();
    } catch (err) {
      // One row for all: nothing in one event can fail it alone; the database failed (a 503 for each request).
      batch.settle(err ?? new Error('append failed'));
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}
