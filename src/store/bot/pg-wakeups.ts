import pg from 'pg';

/** One channel for every deployment on the server; the payload names the prefixed topic. */
const CHANNEL = 'gatehouse_wakeups';
const RECONNECT_MS = 1000;

/**
 * Wake-ups through PostgreSQL LISTEN/NOTIFY, for while Redis is away: a new
 * update still wakes a long poll in another process, and a newer getUpdates
 * still ends an older one with 409, kept by the database the processes
 * already share. One dedicated connection, listening all along (processes
 * notice Redis's absence at different moments), used to notify only while
 * Redis is down. It reconnects by itself and never throws.
 */
export class PgWakeupRelay {
  private client: pg.Client | undefined;
  private closed = false;
  private readonly listeners = new Set<(key: string, message: string) => void>();

  constructor(private readonly url: string) {
    this.connect();
  }

  private connect(): void {
    if (this.closed) return;
    const u = new URL(this.url);
    u.searchParams.delete('schema');
    const c = new pg.Client({ connectionString: u.toString(), connectionTimeoutMillis: 3000, keepAlive: true });
    let retried = false;
    const retry = () => {
      if (this.client === c) this.client = undefined;
      if (retried || this.closed) return;
      retried = true;
      c.end().catch(() => undefined);
      setTimeout(() => this.connect(), RECONNECT_MS).unref();
    };
    c.on('error', retry);
    c.on('end', retry);
    c.on('notification', (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      const i = n.payload.indexOf('\n');
      if (i < 0) return;
      const key = n.payload.slice(0, i);
      const message = n.payload.slice(i + 1);
      for (const l of this.listeners) l(key, message);
    });
    c.connect()
      .then(() => c.query(`LISTEN ${CHANNEL}`))
      .then(() => {
        if (this.closed) c.end().catch(() => undefined);
        else this.client = c;
      })
      .catch(retry);
  }

  /** Listening now: wake-ups published through PostgreSQL reach this process. */
  connected(): boolean {
    return this.client !== undefined;
  }

  /** False while the relay's own connection is down (the caller then wakes only this process). */
  publish(key: string, message: string): boolean {
    const c = this.client;
    if (!c) return false;
    c.query('select pg_notify($1, $2)', [CHANNEL, `${key}\n${message}`]).catch(() => undefined);
    return true;
  }

  onMessage(listener: (key: string, message: string) => void): void {
    this.listeners.add(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }
}
