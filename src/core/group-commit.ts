/** Jobs per transaction or statement, unless the queue says otherwise. */
export const MAX_GROUP = 200;

export interface GroupCommitOptions<I> {
  /** Groups being written at once: 1 on SQLite (one connection); on PostgreSQL a few overlap the commits' wait for the disk. */
  maxInFlight: number;
  /** Jobs per group (a bounded transaction, or a multi-row statement within the parameter limits). */
  maxGroup?: number;
  /** Jobs on the same key never share a group (the later one waits for the next), so each sees every earlier one's effect. */
  key?: (input: I) => string;
}

interface Waiting<I, O> {
  input: I;
  done(out: O | undefined, err?: unknown): void;
}

/**
 * Group commit: the writes asked for in one turn of the event loop, and while
 * a group is being written, go into the next group, written by `writeGroup`
 * in one transaction or statement (one commit for all). Each caller's
 * promise settles only once the group holding its write has committed, so an
 * answer that follows it is never sent before its write is stored. A group
 * that fails is retried job by job, so each caller gets its own outcome
 * (one bad row, a duplicate key, must not fail the others). The one queue of
 * this kind on the token paths (src/store/oauth: refresh rotations, code
 * redemptions, opaque-token inserts).
 */
export class GroupCommit<I, O> {
  private queue: Waiting<I, O>[] = [];
  private scheduled = false;
  private inFlight = 0;

  private readonly maxInFlight: number;
  private readonly maxGroup: number;
  private readonly key: ((input: I) => string) | undefined;

  constructor(private readonly writeGroup: (inputs: I[]) => Promise<O[]>, opts: GroupCommitOptions<I>) {
    this.maxInFlight = opts.maxInFlight;
    this.maxGroup = opts.maxGroup ?? MAX_GROUP;
    this.key = opts.key;
  }

  submit(input: I): Promise<O | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ input, done: (out, err) => (err === undefined ? resolve(out) : reject(err)) });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // After this turn of the event loop: the requests read in the same turn share one commit.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private take(): Waiting<I, O>[] {
    if (!this.key) return this.queue.splice(0, this.maxGroup);
    const seen = new Set<string>();
    const group: Waiting<I, O>[] = [];
    const rest: Waiting<I, O>[] = [];
    for (const w of this.queue) {
      const k = this.key(w.input);
      if (group.length < this.maxGroup && !seen.has(k)) {
        seen.add(k);
        group.push(w);
      } else {
        rest.push(w);
      }
    }
    this.queue = rest;
    return group;
  }

  private async flush(): Promise<void> {
    const group = this.take();
    if (group.length === 0) return;
    this.inFlight++;
    this.schedule();
    try {
      const outs = await this.writeGroup(group.map((w) => w.input));
      group.forEach((w, i) => w.done(outs[i]));
    } catch (err) {
      if (group.length === 1) group[0]!.done(undefined, err ?? new Error('write failed'));
      else {
        await Promise.all(group.map((w) => this.writeGroup([w.input]).then((o) => w.done(o[0]), (e: unknown) => w.done(undefined, e ?? new Error('write failed')))));
      }
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}

