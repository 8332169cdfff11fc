import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';
import { GroupCommit } from '../../core/group-commit.js';
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

/** The group commit of events appended outside a transaction (appendBatcher). */
export type AppendBatcher = GroupCommit<NotifyEvent, void, 'per-group'>;

/**
 * Group commit for events appended outside a transaction (token.issued on the
 * client-credentials path, sign-in events): the appends that arrive while a
 * batch is being written go into the next one, written as one row by one
 * statement (src/store/notify/fanout.ts fans it out later). Each caller's
 * promise settles once its own event has committed, so an answer that follows
 * it is never sent before its event is stored. What this saves is the commit
 * (a WAL write on SQLite, an fsync on PostgreSQL) and the rows and index
 * entries of each event and its deliveries. The appenders of one batch share
 * one promise ('per-group'): a promise and two closures per event were a good
 * part of the Node CPU that recording a token.issued costs. One row for all:
 * nothing in one event can fail it alone, so a failure is the database's and
 * fails the batch (a 503 for each request). `writeRow` writes one batch row
 * and resolves once it is committed (batchWriter, src/store/notify/fanout.ts);
 * `committed` wakes the worker.
 */
export function appendBatcher(writeRow: (id: string, events: NotifyEvent[]) => Promise<void>, committed: () => void, postgres: boolean): AppendBatcher {
  return new GroupCommit<NotifyEvent, void, 'per-group'>(async (events) => {
    await writeRow(newId('bat_', events[0]!.createdAt), events);
    return [];
  }, {
    promises: 'per-group',
    maxGroup: MAX_BATCH,
    // SQLite has one connection; on PostgreSQL the commit's wait for the disk dominates, so several overlap.
    maxInFlight: postgres ? 4 : 1,
    committed,
  });
}
