/** Writes per transaction: a bounded transaction and a bounded multi-row insert. */
export const MAX_GROUP = 200;

interface Waiting<W, R> {
  write: W;
  resolve(r: R): void;
  reject(err: unknown): void;
}

/**
 * Group commit: the writes that arrive while a group commits go into the
 * next group, one transaction for all (`commit` gets them in arrival order
 * and returns one result per write, in that order). Each caller's promise
 * settles once its own write has committed, so nothing is answered before it
 * is stored. A group that fails is retried write by write, so one write's
 * error is its own (a deadlock or a dropped connection is retried once this
 * way). `committed` runs after each commit that succeeded, with the writes
 * and their results (to wake readers once per group rather than per write).
 */
export class GroupCommits<W, R> {
  private queue: Waiting<W, R>[] = [];
  private running = false;

  constructor(
    private readonly commit: (writes: W[]) => Promise<R[]>,
    private readonly committed?: (writes: W[], results: R[]) => void,
  ) {}

  write(w: W): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write: w, resolve, reject });
      if (!this.running) {
        this.running = true;
        // After this turn of the event loop: writes read in the same turn share one commit.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const group = this.queue.splice(0, MAX_GROUP);
      try {
        const writes = group.map((g) => g.write);
        const results = await this.commit(writes);
        this.settle(writes, results);
        group.forEach((g, i) => g.resolve(results[i]!));
      } catch {
        await Promise.all(group.map(async (g) => {
          try {
            const [result] = await this.commit([g.write]);
            this.settle([g.write], [result!]);
            g.resolve(result!);
          } catch (err) {
            g.reject(err);
          }
        }));
      }
    }
    this.running = false;
  }

  private settle(writes: W[], results: R[]): void {
    try {
      this.committed?.(writes, results);
    } catch {
      // Waking readers is best effort: the writes are stored, and their callers are answered regardless.
    }
  }
}
