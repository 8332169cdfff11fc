import type { Kysely } from 'kysely';
import type { TxHooks } from '../core/ports.js';
import type { DB } from './schema.js';
import { retryOnceIfSafe } from '../core/unavailable.js';

/** One transaction's after-commit hooks (`TxHooks`, src/core/ports.ts). */
export class TxScope implements TxHooks {
  private readonly hooks = new Set<() => void | Promise<void>>();

  afterCommit(hook: () => void | Promise<void>): void {
    this.hooks.add(hook);
  }

  /** A hook that fails must not hide the commit from the caller, nor stop the other hooks. */
  async committed(): Promise<void> {
    const waiting: Promise<void>[] = [];
    for (const hook of this.hooks) {
      try {
        const r = hook();
        if (r) waiting.push(r.catch(() => undefined));
      } catch {
        // Hooks are wake-ups, cache invalidations and waits: best effort by nature.
      }
    }
    await Promise.all(waiting);
  }
}

/**
 * The one SQL implementation of `Transactional.transaction` (core, chat-bot,
 * third-party login and outbox stores): `storesOn` builds the stores on the
 * transaction, with the scope their writes register after-commit work in.
 */
export async function runTransaction<S extends object, T>(
  db: Kysely<DB>, storesOn: (trx: Kysely<DB>, scope: TxScope) => S, fn: (tx: S & TxHooks) => Promise<T>,
): Promise<T> {
  // A transaction whose connection died before COMMIT runs once more, from the start (src/store/pg-resilience.ts).
  const { result, scope } = await retryOnceIfSafe(async () => {
    const scope = new TxScope();
    const result = await db.transaction().execute((trx) => {
      const stores = storesOn(trx, scope);
      return fn(Object.assign(stores, { afterCommit: (hook: () => void | Promise<void>) => scope.afterCommit(hook) }));
    });
    return { result, scope };
  });
  // After the commit, outside the retry: a committed transaction never runs twice.
  await scope.committed();
  return result;
}

/**
 * For a store method of several statements: joins the caller's transaction
 * when the store was built on one (`scope` set), else runs in one of its own.
 */
export function within<T>(db: Kysely<DB>, scope: TxScope | undefined, fn: (trx: Kysely<DB>, scope: TxScope) => Promise<T>): Promise<T> {
  if (scope) return fn(db, scope);
  return runTransaction(db, (trx, own) => ({ trx, own }), ({ trx, own }) => fn(trx, own));
}
