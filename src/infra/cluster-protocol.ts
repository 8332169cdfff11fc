/**
 * The messages between a `serve` primary and its workers (GATEHOUSE_WORKERS,
 * node:cluster IPC). Every message carries `gh` so that other users of the
 * channel (prom-client's metrics aggregation) pass by untouched.
 */

/** Worker → primary. */
export type ToPrimary =
  /** Wake-up published here; the primary passes it to the other workers subscribed to the topic. */
  | { gh: 'pub'; topic: string; message: string }
  /** First listener on `topic` here (answered `ack` once the primary routes the topic here), or the last one gone. */
  | { gh: 'sub'; topic: string; id: number }
  | { gh: 'unsub'; topic: string }
  /** Bot API flood control, one for the whole `serve`: answered `flood` with the seconds to wait (0: go). */
  | { gh: 'flood'; id: number; botId: number; chat: number | string }
  | { gh: 'flood-back'; botId: number; chat: number | string }
  /** A bot's webhook delivery lease (one worker delivers a bot's updates): answered `lease`. */
  | { gh: 'lease'; id: number; botId: number; ms: number }
  /** Events were committed here: the worker running the notification role should look at once. */
  | { gh: 'outbox' }
  /** Listening and serving; the URLs the listeners got (port 0 resolved). */
  | { gh: 'ready'; authUrl: string; apiUrl: string | undefined; botUrl: string | undefined }
  /** Slot 1 migrated the database and made the signing key and BotFather; `someone`: a person's account exists. */
  | { gh: 'prepared'; someone: boolean }
  /** Another slot asks to be told (answered `prepared`) once the database is prepared. */
  | { gh: 'await-prepared' };

/** Primary → worker. */
export type ToWorker =
  | { gh: 'pub'; topic: string; message: string }
  | { gh: 'ack'; id: number }
  | { gh: 'flood'; id: number; wait: number }
  | { gh: 'lease'; id: number; ok: boolean }
  | { gh: 'outbox' }
  | { gh: 'prepared' };

/** Set by the primary in a worker's environment: its slot (1…N). Slot 1 runs the notification worker role. */
export const WORKER_SLOT_ENV = 'GATEHOUSE_WORKER_SLOT';

export function isClusterMessage(m: unknown): m is { gh: string } {
  return typeof m === 'object' && m !== null && typeof (m as { gh?: unknown }).gh === 'string';
}

/** Several messages sent in one turn of the event loop, in order (one IPC write and one wake-up of the other side instead of one each). */
interface Batch<M> {
  gh: 'batch';
  ms: M[];
}

/** The messages in `m` (a batch or a single message), in the order they were sent; none when it is not ours. */
export function unbatch<M extends { gh: string }>(m: unknown): M[] {
  if (!isClusterMessage(m)) return [];
  return m.gh === 'batch' ? (m as Batch<M>).ms : [m as M];
}

/**
 * Queues the messages sent to one process during a turn of the event loop
 * and hands them to `write` together once the turn's I/O callbacks are done
 * (setImmediate): a worker busy with many requests (each asking the flood
 * control) costs the primary one message per turn rather than one per
 * request, and the primary relaying many wake-ups to one worker sends it one.
 * Order is kept, so the primary's `sub` then `ack` barrier holds.
 */
export class Outbox<M extends { gh: string }> {
  private queue: M[] | undefined;

  constructor(private readonly write: (m: M | Batch<M>) => void) {}

  /** Queued, or with what is queued at once when `now` (what is queued goes first: order is kept). */
  send(m: M, now = false): void {
    if (now) {
      (this.queue ??= []).push(m);
      this.flush();
      return;
    }
    if (this.queue) {
      this.queue.push(m);
      return;
    }
    this.queue = [m];
    setImmediate(() => this.flush());
  }

  private flush(): void {
    const q = this.queue;
    this.queue = undefined;
    if (q?.length) this.write(q.length === 1 ? q[0]! : { gh: 'batch', ms: q });
  }
}
