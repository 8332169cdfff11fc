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
