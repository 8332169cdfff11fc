import { PostgresAdapter, type Kysely } from 'kysely';
import type { DB } from '../schema.js';

/** What one open storage's outbox stores share: the subscription cache and the commit wake-up. */
export class NotifyShared {
  readonly postgres: boolean;
  private types: Set<string> | undefined;
  private loadedAt = 0;
  private loading = false;
  private generation = 0;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly db: Kysely<DB>, private readonly ttlMs = 5000) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  /**
   * Answers from memory; refreshes in the background when older than the TTL
   * (another process may have added an endpoint). Unknown means true.
   */
  subscribed(type: string): boolean {
    if (Date.now() - this.loadedAt > this.ttlMs) this.refresh();
    const t = this.types;
    return !t || t.has(type) || t.has('*');
  }

  /** After a local change to endpoints: unknown until reloaded. */
  invalidate(): void {
    this.generation++;
    this.types = undefined;
    this.loadedAt = 0;
  }

  /** Not awaited by callers: inside a SQLite transaction a query on the root connection waits for the commit. */
  refresh(): void {
    if (this.loading) return;
    this.loading = true;
    const generation = this.generation;
    this.db.selectFrom('webhook_subscriptions as s').innerJoin('webhook_endpoints as e', 'e.id', 's.endpoint_id')
      .select('s.event_type').distinct().where('e.disabled_at', 'is', null).execute()
      .then((rows) => {
        if (generation !== this.generation) return;
        this.types = new Set(rows.map((r) => r.event_type));
        this.loadedAt = Date.now();
      })
      .catch(() => undefined)
      .finally(() => {
        this.loading = false;
        if (generation !== this.generation) this.refresh();
      });
  }

  onAppended(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  appended(): void {
    for (const l of [...this.listeners]) l();
  }
}

/** Per transaction: whether anything was appended or endpoints changed, acted on after commit. */
export interface TxScope {
  appended: boolean;
  endpointsChanged: boolean;
}

/** Runs `fn` in a transaction unless `db` already is one; then tells `shared` what committed. */
export async function inTransaction<T>(db: Kysely<DB>, shared: NotifyShared, scope: TxScope | undefined, fn: (trx: Kysely<DB>, scope: TxScope) => Promise<T>): Promise<T> {
  if (db.isTransaction && scope) return fn(db, scope);
  const own: TxScope = { appended: false, endpointsChanged: false };
  const result = await db.transaction().execute((trx) => fn(trx, own));
  afterCommit(shared, own);
  return result;
}

export function afterCommit(shared: NotifyShared, scope: TxScope): void {
  if (scope.endpointsChanged) shared.invalidate();
  if (scope.appended) shared.appended();
}
