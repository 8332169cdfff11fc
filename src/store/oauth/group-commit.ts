import type { Kysely } from 'kysely';
import type { DB } from '../schema.js';

/** Jobs per transaction or statement. */
export const MAX_GROUP = 200;

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
 * that fails is retried job by job, so each caller gets its own outcome.
 * `key`: jobs on the same key never share a group (the later one waits for
 * the next), so each job sees every earlier one's effect.
 */
export class GroupCommit<I, O> {
  private queue: Waiting<I, O>[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly writeGroup: (inputs: I[]) => Promise<O[]>,
    private readonly maxInFlight: number,
    private readonly key?: (input: I) => string,
  ) {}

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
    if (!this.key) return this.queue.splice(0, MAX_GROUP);
    const seen = new Set<string>();
    const group: Waiting<I, O>[] = [];
    const rest: Waiting<I, O>[] = [];
    for (const w of this.queue) {
      const k = this.key(w.input);
      if (group.length < MAX_GROUP && !seen.has(k)) {
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
        // One bad job must not fail the others: each alone, with its own outcome.
        await Promise.all(group.map((w) => this.writeGroup([w.input]).then((o) => w.done(o[0]), (e: unknown) => w.done(undefined, e ?? new Error('write failed')))));
      }
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}

/**
 * SQLite: a group is its jobs run one after another in one transaction (the
 * statements are prepared and synchronous; the commit, a WAL append of every
 * page the group touched, is what is shared).
 */
export function sqliteGroup<I, O>(db: Kysely<DB>, job: (trx: Kysely<DB>, input: I) => Promise<O>, key?: (input: I) => string): GroupCommit<I, O> {
  return new GroupCommit<I, O>((inputs) => db.transaction().execute(async (trx) => {
    const outs: O[] = [];
    for (const input of inputs) outs.push(await job(trx, input));
    return outs;
  }), 1, key);
}
