import { isStorageUnavailable } from '../core/unavailable.js';
import { openStorage, type SqlStorage, type StorageOptions } from './index.js';
import { isConnectionLost } from './pg-resilience.js';

export interface StoreLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Backoff between attempts to reach the database at start: doubling from 250 ms, at most 2 s apart. */
const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 2000;
/** One log line per this much waiting, however many attempts it holds. */
const LOG_EVERY_MS = 10_000;

/**
 * Logs a recurring connection error at most once per window, so an outage
 * reads as a few lines rather than one per broken connection.
 */
export function throttledLog(log: StoreLog, msg: string, windowMs = LOG_EVERY_MS): (err: Error) => void {
  let last = 0;
  return (err) => {
    const now = Date.now();
    if (now - last < windowMs) return;
    last = now;
    log.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, msg);
  };
}

/**
 * Opens the storage, waiting with backoff while the database cannot be
 * reached (a process started before its database, or during a restart,
 * serves once it is up rather than exiting). Other errors (a bad URL, a
 * failed migration) end the start at once.
 */
export async function openStorageWhenReachable(url: string, log: StoreLog, opts: Pick<StorageOptions, 'secretKey' | 'migrate' | 'migrations' | 'poolMax'> = {}): Promise<SqlStorage> {
  const onConnectionError = throttledLog(log, 'database connection lost; requests that need it answer 503 until it is back');
  const started = Date.now();
  let wait = FIRST_WAIT_MS;
  let attempts = 0;
  let lastLog = 0;
  for (;;) {
    attempts++;
    try {
      const storage = await openStorage(url, { ...opts, onConnectionError });
      if (attempts > 1) log.info({ attempts, waited_ms: Date.now() - started }, 'database reachable; starting');
      return storage;
    } catch (e) {
      if (!isConnectionLost(e) && !isStorageUnavailable(e)) throw e;
      if (Date.now() - lastLog >= LOG_EVERY_MS) {
        lastLog = Date.now();
        const cause = (isStorageUnavailable(e) ? e.cause : e) as Error;
        log.warn({ attempts, waited_ms: lastLog - started, err: { message: cause?.message, code: (cause as { code?: string })?.code } },
          'database unreachable; waiting for it before serving (retrying with backoff)');
      }
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, MAX_WAIT_MS);
    }
  }
}
