import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';
import type pg from 'pg';
import { StorageUnavailableError } from '../core/unavailable.js';
import { isStaleStatement } from './pg-driver.js';

/** Socket-level failures: the server is unreachable or the connection broke. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** pg's own messages for a connection that closed, timed out or was never made. */
const LOST = /Connection terminated|not queryable|timeout exceeded when trying to connect|Query read timeout|connection timeout/i;

/**
 * True when `e` says the database connection is gone or cannot be made,
 * rather than that the query was wrong: SQLSTATE class 08 (connection
 * exception), 57P01–57P03 (terminated by an administrator, crash, or still
 * starting), 53300 (too many connections), a socket error, or pg's own
 * messages for a closed connection.
 */
export function isConnectionLost(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300' || NETWORK_CODES.has(code))) return true;
  return LOST.test(e.message);
}

/** pg refuses a query on a client it already knows is broken, before sending anything. */
const NEVER_SENT = /not queryable/;

function isRead(query: CompiledQuery): boolean {
  const kind = query.query.kind;
  if (kind === 'SelectQueryNode') return true;
  return kind === 'RawNode' && /^\s*select\b/i.test(query.sql);
}

/** A connection that remembers whether it is inside a transaction, so a failure knows what is safe to retry. */
class GuardedConnection implements DatabaseConnection {
  inTransaction = false;
  /** COMMIT was sent: if the connection dies now, whether it committed is unknown. */
  committing = false;

  constructor(readonly inner: DatabaseConnection, private readonly driver: Driver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.run<R>(query, true);
  }

  private async run<R>(query: CompiledQuery, mayRebind: boolean): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(query);
    } catch (e) {
      if (mayRebind && isStaleStatement(e)) return this.rebind<R>(query, e);
      if (!isConnectionLost(e)) throw e;
      // A read outside a transaction changed nothing, and a statement pg refused to send (the
      // connection was already known dead) never ran: either runs once more on a fresh connection.
      if (!this.inTransaction && (isRead(query) || NEVER_SENT.test((e as Error).message))) return this.retryRead<R>(query, e);
      // Inside a transaction nothing is committed before COMMIT: the whole transaction may run again.
      throw new StorageUnavailableError('database', this.inTransaction && !this.committing, { cause: e });
    }
  }

  /**
   * The server refused a prepared statement before running it (src/store/pg-driver.ts, which has
   * already named it afresh): outside a transaction it runs again at once; inside, the transaction
   * is aborted, but nothing of it is committed, so it may run again from BEGIN.
   */
  private async rebind<R>(query: CompiledQuery, e: unknown): Promise<QueryResult<R>> {
    if (this.inTransaction) throw new StorageUnavailableError('database', !this.committing, { cause: e });
    return this.run<R>(query, false);
  }

  private async retryRead<R>(query: CompiledQuery, first: unknown): Promise<QueryResult<R>> {
    // As in retryOnceIfSafe: let the pool drop the other connections that died with this one.
    await new Promise((resolve) => setImmediate(resolve));
    let fresh: DatabaseConnection;
    try {
      fresh = await this.driver.acquireConnection();
    } catch (e) {
      throw new StorageUnavailableError('database', false, { cause: isConnectionLost(e) ? e : first });
    }
    try {
      return await fresh.executeQuery<R>(query);
    } catch (e) {
      if (isConnectionLost(e)) throw new StorageUnavailableError('database', false, { cause: e });
      throw e;
    } finally {
      await this.driver.releaseConnection(fresh);
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

/** Turns connection failures into StorageUnavailableError, marked retryable only when nothing can have been committed. */
class GuardedDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    try {
      return new GuardedConnection(await this.inner.acquireConnection(), this.inner);
    } catch (e) {
      // Nothing ran yet: a transaction that could not even start may be tried again.
      if (isConnectionLost(e)) throw new StorageUnavailableError('database', true, { cause: e });
      throw e;
    }
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as GuardedConnection;
    c.inTransaction = true;
    c.committing = false;
    // The driver only notes BEGIN here; it is sent with the first statement, through this
    // connection's guard (src/store/pg-driver.ts), so the driver is given its own connection.
    await this.inner.beginTransaction(c.inner, settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as GuardedConnection;
    c.committing = true;
    await this.inner.commitTransaction(c);
    c.inTransaction = false;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as GuardedConnection;
    try {
      await this.inner.rollbackTransaction(c);
    } catch (e) {
      // ROLLBACK on a dead connection: the server rolls back by itself. Kysely
      // throws this error instead of the one that caused the rollback, so it
      // carries whether that one is safe to retry.
      if (e instanceof StorageUnavailableError) throw new StorageUnavailableError('database', !c.committing, { cause: e.cause });
      throw e;
    } finally {
      c.inTransaction = false;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const c = connection as GuardedConnection;
    c.inTransaction = false;
    await this.inner.releaseConnection(c.inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** `dialect` with its driver wrapped by GuardedDriver. */
export function guardedDialect(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new GuardedDriver(dialect.createDriver()),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}

/**
 * A pg client that never emits an unhandled 'error' (a backend terminated
 * by the server, 57P01, or a broken socket would otherwise end the process:
 * pg-pool listens only while a client is idle), and that closes itself when
 * a query timed out so the pool discards it instead of reusing a connection
 * with a reply still on its way. `driver` is the loaded `pg` module (loaded
 * only for a PostgreSQL URL: a SQLite server never pays for it).
 */
export function guardedClient(driver: typeof pg, onError: (err: Error) => void): typeof pg.Client {
  return class GuardedClient extends driver.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.on('error', onError);
    }

    // pg's overloads cannot be restated; the wrapper passes every form through.
    override query(...args: unknown[]): never {
      const r = (super.query as (...a: unknown[]) => unknown)(...args);
      if (r instanceof Promise) {
        r.catch((e: Error) => {
          if (e?.message === 'Query read timeout') this.end().catch(() => undefined);
        });
      }
      return r as never;
    }
  };
}
