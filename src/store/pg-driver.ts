import { CompiledQuery, PostgresDialect, type DatabaseConnection, type Dialect, type Driver, type QueryResult, type TransactionSettings } from 'kysely';
import type pg from 'pg';

/** Distinct SQL texts given a name: each connection holds at most this many prepared statements. */
const NAMED_MAX = 256;
/** Texts seen once, remembered to recognise a second use (forgotten all at once past this). */
const SEEN_MAX = 4096;
/**
 * A statement binding more values than this is a list whose length varies
 * (bulk inserts, long IN lists): each length is a text of its own, used too
 * rarely to be worth a slot.
 */
const PARAMS_MAX = 64;
/** Statements PostgreSQL plans; BEGIN, COMMIT, DDL and the like go by the simple protocol as before. */
const PLANNED = /^\s*(select|insert|update|delete|with)\b/i;
const COUNTED = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/**
 * Names for prepared statements, one per SQL text. PostgreSQL parses and
 * plans an unnamed statement on every execution (about as much CPU on the
 * server as the whole query costs Node); a named one is parsed once per
 * connection and then only bound and executed. pg prepares a name on a
 * connection the first time it is used there, so a new connection (after a
 * restart or a terminated backend) prepares it again by itself.
 *
 * A text is named at its second use (one-off statements never take a slot),
 * and at most NAMED_MAX texts ever are, so the statements kept per connection
 * stay bounded whatever the queries.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private readonly seen = new Set<string>();
  /** Names handed out so far: each is new, so a name never meets a different text on a connection. */
  private issued = 0;
  /** Off once the server showed that it does not keep our statements (a pooler in transaction mode). */
  enabled = true;

  nameOf(text: string, params: number): string | undefined {
    if (!this.enabled) return undefined;
    const name = this.names.get(text);
    if (name !== undefined || this.names.size >= NAMED_MAX || params > PARAMS_MAX) return name;
    if (!this.seen.has(text)) {
      if (!PLANNED.test(text)) return undefined;
      if (this.seen.size >= SEEN_MAX) this.seen.clear();
      this.seen.add(text);
      return undefined;
    }
    this.seen.delete(text);
    const fresh = `gh_${this.issued++}`;
    this.names.set(text, fresh);
    return fresh;
  }

  /**
   * `name` no longer fits the server: the text gets a new name (prepared
   * afresh on every connection), or naming stops altogether when the server
   * lost or already had the statement, which only a connection pooler does.
   */
  refused(text: string, e: unknown): void {
    const code = (e as { code?: unknown }).code;
    if (code === '26000' || code === '42P05') this.enabled = false;
    if (this.names.has(text)) this.names.set(text, `gh_${this.issued++}`);
  }
}

/**
 * True when PostgreSQL refused to bind a prepared statement that no longer
 * matches it, before running anything: its result columns changed under it
 * (`select *` after another process added a column, 0A000), or the server
 * does not have it (26000) or already has another under its name (42P05).
 */
export function isStaleStatement(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  if (code === '26000' || code === '42P05') return true;
  return code === '0A000' && /cached plan must not change result type/.test((e as Error).message);
}

/** pg's client in pipeline mode sends a query without waiting for the answer to the one before. */
type PipelinedClient = pg.PoolClient & { pipeline: boolean; connection: { stream: { cork(): void; uncork(): void } } };

class PgConnection implements DatabaseConnection {
  /** BEGIN not sent yet: it goes out with the transaction's first statement, in the same write. */
  private pendingBegin: string | undefined;

  constructor(readonly client: pg.PoolClient, private readonly names: StatementNames) {}

  /** `undefined`: a new checkout, nothing pending from the last one. */
  deferBegin(text: string | undefined): void {
    this.pendingBegin = text;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.pendingBegin !== undefined) return this.beginWith<R>(query);
    return this.run<R>(query);
  }

  private async run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const values = query.parameters as unknown[];
    const name = this.names.nameOf(query.sql, values.length);
    let r: pg.QueryResult;
    try {
      r = await this.client.query(name === undefined ? { text: query.sql, values } : { name, text: query.sql, values });
    } catch (e) {
      if (name !== undefined && isStaleStatement(e)) this.names.refused(query.sql, e);
      throw e;
    }
    return { rows: (r.rows ?? []) as R[], numAffectedRows: COUNTED.has(r.command) ? BigInt(r.rowCount ?? 0) : undefined };
  }

  /**
   * BEGIN and the first statement in one round trip instead of two. BEGIN
   * fails only with its connection, which the statement then shares: the
   * statement never runs outside the transaction. The client leaves pipeline
   * mode once both are answered; nothing else uses it meanwhile (the
   * transaction waits for this statement).
   */
  private async beginWith<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const begin = this.pendingBegin!;
    this.pendingBegin = undefined;
    const client = this.client as PipelinedClient;
    const stream = client.connection.stream;
    client.pipeline = true;
    let opened: Promise<unknown>;
    let first: Promise<QueryResult<R>>;
    stream.cork();
    try {
      opened = client.query(begin);
      first = this.run<R>(query);
    } finally {
      stream.uncork();
    }
    const [b, f] = await Promise.allSettled([opened, first]);
    client.pipeline = false;
    if (b.status === 'rejected') throw b.reason;
    if (f.status === 'rejected') throw f.reason;
    return f.value;
  }

  /** No store streams rows; the interface requires the method. */
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on PostgreSQL here');
  }
}

/**
 * Kysely's PostgreSQL driver on a pg pool, with named prepared statements
 * (StatementNames). Transactions are opened as Kysely's own driver does.
 */
export class PgDriver implements Driver {
  private readonly connections = new WeakMap<pg.PoolClient, PgConnection>();
  private pool: pg.Pool | undefined;

  constructor(pool: pg.Pool, private readonly names = new StatementNames()) {
    this.pool = pool;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (!this.pool) throw new Error('driver has already been destroyed');
    const client = await this.pool.connect();
    let connection = this.connections.get(client);
    if (!connection) {
      connection = new PgConnection(client, this.names);
      this.connections.set(client, connection);
    }
    connection.deferBegin(undefined);
    return connection;
  }

  /** Sent with the first statement (PgConnection.beginWith), or alone by a COMMIT or ROLLBACK that comes first. */
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let text = 'begin';
    if (settings.isolationLevel || settings.accessMode) {
      text = `start transaction${settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : ''}${settings.accessMode ? ` ${settings.accessMode}` : ''}`;
    }
    (connection as PgConnection).deferBegin(text);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PgConnection).client.release();
  }

  async destroy(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }
}

/** Kysely's PostgreSQL dialect (compiler, adapter, introspector) with PgDriver on `pool`. */
export function pgDialect(pool: pg.Pool): Dialect {
  const base = new PostgresDialect({ pool });
  return {
    createAdapter: () => base.createAdapter(),
    createDriver: () => new PgDriver(pool),
    createIntrospector: (db) => base.createIntrospector(db),
    createQueryCompiler: () => base.createQueryCompiler(),
  };
}
