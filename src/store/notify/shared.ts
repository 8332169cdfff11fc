import { PostgresAdapter, type Kysely } from 'kysely';
import type { SecretBox } from '../../core/secret-box.js';
import type { DB } from '../schema.js';
import { appendBatcher, type AppendBatcher } from './batch.js';
import { batchWriter, fanOut } from './fanout.js';
import type { TxScope } from '../transaction.js';

/**
 * How long a process trusts the subscriptions it read, counted from the start
 * of the read. A change that adds a subscription answers only after this long
 * (`propagated`), so every process has read it again, or stopped trusting
 * what it had, before it issues its next token: nothing subscribed is ever
 * skipped, whichever process commits it.
 */
export const SUBSCRIPTIONS_TTL_MS = 500;

/** Events a claim fans out at most (a claim under a backlog stays bounded). */
const CLAIM_FAN_OUT_MAX = 2000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What one open storage's outbox stores share: the subscription cache, the commit wake-up, the group commit, the secret key. */
export class NotifyShared {
  readonly postgres: boolean;
  readonly batch: AppendBatcher;
  private types: Set<string> | undefined;
  /** When the read behind `types` started (monotonic ms). */
  private readAt = 0;
  private loading: { promise: Promise<Set<string>>; startedAt: number } | undefined;
  private generation = 0;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly db: Kysely<DB>, readonly secrets: SecretBox, private readonly ttlMs = SUBSCRIPTIONS_TTL_MS) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    this.batch = appendBatcher(batchWriter(db), this.appended, this.postgres);
  }

  /**
   * From memory, without waiting: true while the last read is older than the
   * TTL or unknown (errs towards recording); renews a read past a third of
   * the TTL in the background, so a busy process never waits for one.
   */
  subscribed(type: string): boolean {
    const types = this.fresh();
    return !types || types.has(type) || types.has('*');
  }

  /**
   * Exact as of at most the TTL before the call: from memory when the last
   * read is that recent (synchronously: the token path asks it per token),
   * else read now, through `db` (the caller's transaction when it has one: on
   * SQLite a read on the root connection would wait for that transaction's
   * commit).
   */
  hasSubscriber(type: string, db: Kysely<DB>): boolean | Promise<boolean> {
    const types = this.fresh();
    if (types) return types.has(type) || types.has('*');
    return (db.isTransaction ? this.read(db) : this.load()).then((read) => read.has(type) || read.has('*'));
  }

  /** After a local change to endpoints: unknown until read again (an after-commit hook, so one function). */
  readonly invalidate = (): void => {
    this.generation++;
    this.types = undefined;
    this.readAt = 0;
    this.loading = undefined;
  };

  /** After a change that may add a subscription: waits until no process can still trust a read from before it. */
  readonly propagated = (): Promise<void> => sleep(this.ttlMs);

  /** Starts a read in the background when the last one is getting old. */
  refresh(): void {
    this.load().catch(() => undefined);
  }

  private fresh(): Set<string> | undefined {
    const age = performance.now() - this.readAt;
    if (age > this.ttlMs / 3) this.refresh();
    return age <= this.ttlMs ? this.types : undefined;
  }

  /** One read on the root connection at a time; a caller joins one only if it started within the TTL. */
  private load(): Promise<Set<string>> {
    const now = performance.now();
    if (this.loading && now - this.loading.startedAt < this.ttlMs / 3) return this.loading.promise;
    const entry = { promise: this.read(this.db), startedAt: now };
    this.loading = entry;
    entry.promise.finally(() => {
      if (this.loading === entry) this.loading = undefined;
    }).catch(() => undefined);
    return entry.promise;
  }

  private async read(db: Kysely<DB>): Promise<Set<string>> {
    const generation = this.generation;
    const startedAt = performance.now();
    const rows = await db.selectFrom('webhook_subscriptions as s').innerJoin('webhook_endpoints as e', 'e.id', 's.endpoint_id')
      .select('s.event_type').distinct().where('e.disabled_at', 'is', null).execute();
    const types = new Set(rows.map((r) => r.event_type));
    // A transaction's view may yet roll back: only a committed read is kept.
    if (!db.isTransaction && generation === this.generation && startedAt >= this.readAt) {
      this.types = types;
      this.readAt = startedAt;
    }
    return types;
  }

  /**
   * Fans out the pending batch rows (src/store/notify/fanout.ts) through `db`
   * (`scope` set when it is a transaction). A reader passes `wait` so that it
   * sees every event committed before it, and wakes the worker when that
   * queued deliveries. The worker's claim does not wait, bounds its work, and
   * wakes no one unless it left rows behind: it claims what it moved itself
   * (src/store/notify/deliveries.ts), and its wake-up only made the worker
   * claim a second time for nothing, once per claim under a steady flow.
   */
  async settle(db: Kysely<DB>, scope: TxScope | undefined, reader: boolean): Promise<number> {
    const maxEvents = reader ? Infinity : CLAIM_FAN_OUT_MAX;
    const moved = await fanOut(db, scope, this.postgres, { wait: reader, maxEvents });
    if (moved === 0 || (!reader && moved < maxEvents)) return moved;
    if (scope) scope.afterCommit(this.appended);
    else this.appended();
    return moved;
  }

  onAppended(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events or deliveries were committed: wake the worker (an after-commit hook, so one function). */
  readonly appended = (): void => {
    for (const l of [...this.listeners]) l();
  };
}
