import { GatehouseError } from './errors.js';

/**
 * A store could not be reached: the database connection died or was refused,
 * or Redis is disconnected. The store layer raises it; every surface answers
 * it as 503 `temporarily_unavailable` with `Retry-After` in its own shape
 * (src/http/errors.ts). Nothing about the request was wrong, so the client may
 * retry the same request. It is a `GatehouseError` with the two facts the
 * store's retry needs (`store`, `retryable`), hence its own class.
 */
export class StorageUnavailableError extends GatehouseError {
  /** Seconds a client should wait before retrying (`Retry-After`, RFC 9110 §10.2.3). */
  static readonly retryAfterSeconds = 2;

  constructor(
    readonly store: 'database' | 'redis',
    /**
     * The failed work is known not to have taken effect (a read, or a
     * transaction that never reached COMMIT), so running it again is safe.
     */
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super('temporarily_unavailable', 'the service is temporarily unavailable, retry later', {
      status: 503, retryAfterSeconds: StorageUnavailableError.retryAfterSeconds, detail: `${store} unavailable`, cause: options?.cause,
    });
    this.name = 'StorageUnavailableError';
  }
}

export function isStorageUnavailable(e: unknown): e is StorageUnavailableError {
  return e instanceof StorageUnavailableError;
}

/**
 * Runs `fn`, and once more when it failed on a connection that died before
 * anything was committed (a transaction is retried as a whole, from BEGIN).
 */
export async function retryOnceIfSafe<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (!(e instanceof StorageUnavailableError) || !e.retryable) throw e;
    // One turn of the event loop first: the pool then drops the other connections that died with
    // this one (a database restart ends them all), so the retry gets a live connection.
    await new Promise((resolve) => setImmediate(resolve));
    return fn();
  }
}
