/** Jobs per group unless the queue says otherwise: a bounded transaction, a bounded multi-row statement. */
export const MAX_GROUP = 200;

/** Whether each caller gets a promise of its own, or the callers of a group share one. */
export type Promises = 'per-caller' | 'per-group';

/** What a caller's promise settles with: its own job's result, or nothing when the group's callers share one promise. */
export type Settled<O, P extends Promises> = P extends 'per-group' ? void : O;

export interface GroupCommitOptions<I, O, P extends Promises = 'per-caller'> {
  /**
   * Groups being written at once (default 1). SQLite has one connection, so 1;
   * on PostgreSQL a few overlap the commits' wait for the disk.
   */
  maxInFlight?: number;
  /** Jobs per group (default MAX_GROUP): a bounded transaction, or a multi-row statement within the parameter limits. */
  maxGroup?: number;
  /** Jobs on the same key never share a group (the later one goes to a later group), so each sees every earlier one's effect. */
  key?: (input: I) => string;
  /**
   * 'per-caller' (default): each caller's promise settles with its own job's
   * result or error. 'per-group': every caller of a group gets the group's one
   * promise, which resolves with nothing: no promise or closure per job, for
   * the queues where that allocation is a good part of the cost.
   */
  promises?: P;
  /**
   * A group whose write failed: 'retry-each' (default for 'per-caller') writes
   * its jobs again one by one, so each caller gets its own outcome (one bad
   * row, a duplicate key, must not fail the others); 'fail-group' (the only
   * choice for 'per-group') fails every caller of the group with the error
   * (the write is one row or one statement that nothing in one job can fail
   * alone: the database failed).
   */
  onFailure?: P extends 'per-group' ? 'fail-group' : 'retry-each' | 'fail-group';
  /**
   * With 'retry-each': a failed group of one job is written once more too (a
   * deadlock or a dropped connection gets its second chance). Default false:
   * the lone job's error is its outcome.
   */
  retryAlone?: boolean;
  /**
   * After each write that committed (the group's, or one job's in a retry),
   * before its callers are answered, with the inputs and their results: to
   * wake readers once per group rather than per job. Best effort: what it
   * throws is ignored (the jobs are stored; their callers are answered).
   */
  committed?: (inputs: I[], outputs: O[]) => void;
}

interface Waiter<O> {
  resolve(out: O): void;
  reject(err: unknown): void;
}

/** A group gathering jobs, or waiting for a slot to be written. */
interface Group<I, O> {
  readonly inputs: I[];
  /** 'per-caller': one per input, in order. */
  readonly waiters: Waiter<O>[] | undefined;
  /** With `key`: the keys of its inputs. */
  readonly keys: Set<string> | undefined;
  /** 'per-group': the one promise of its callers, and how it settles. */
  readonly shared: Promise<void> | undefined;
  settle: ((err?: unknown) => void) | undefined;
}

const failure = (err: unknown): unknown => err ?? new Error('group commit failed');

/**
 * Group commit, the one engine behind every write queue (token rotations and
 * redemptions, opaque-token inserts, event batch rows, delivery attempts,
 * chat messages and button presses). The contract:
 *  - The jobs submitted in one turn of the event loop, and while groups are
 *    being written, go into the next group: written by `write` in one
 *    transaction or statement (one commit for all), in submission order;
 *    `write` returns one result per input, in that order.
 *  - A group is written no earlier than the turn after its first job, at most
 *    `maxInFlight` at once, each of at most `maxGroup` jobs; groups start in
 *    the order their jobs came (a job is never overtaken by a later one on the
 *    same key, nor, without keys, by any later one).
 *  - A caller's promise settles only once the write holding its job has
 *    committed (or failed), so an answer that follows it is never sent before
 *    its job is stored.
 *  - `committed` runs after each successful write, before its callers hear.
 * The choices that differ between queues are the options above.
 */
export class GroupCommit<I, O, P extends Promises = 'per-caller'> {
  /** Groups not yet being written, oldest first; only the last ones can have room. */
  private readonly pending: Group<I, O>[] = [];
  private scheduled = false;
  private inFlight = 0;

  private readonly maxInFlight: number;
  private readonly maxGroup: number;
  private readonly key: ((input: I) => string) | undefined;
  private readonly perGroup: boolean;
  private readonly retryEach: boolean;
  private readonly retryAlone: boolean;
  private readonly committed: ((inputs: I[], outputs: O[]) => void) | undefined;

  constructor(private readonly write: (inputs: I[]) => Promise<O[]>, opts: GroupCommitOptions<I, O, P> = {}) {
    this.maxInFlight = opts.maxInFlight ?? 1;
    this.maxGroup = opts.maxGroup ?? MAX_GROUP;
    this.key = opts.key;
    this.perGroup = opts.promises === 'per-group';
    const onFailure = opts.onFailure ?? (this.perGroup ? 'fail-group' : 'retry-each');
    if (this.perGroup && onFailure !== 'fail-group') throw new TypeError("a group's shared promise cannot carry each job's outcome: 'per-group' fails the group");
    this.retryEach = onFailure === 'retry-each';
    this.retryAlone = opts.retryAlone ?? false;
    this.committed = opts.committed;
  }

  /** Queues a job; see the class for when the promise settles and with what. */
  submit(input: I): Promise<Settled<O, P>> {
    const group = this.groupFor(input);
    group.inputs.push(input);
    if (!this.scheduled) this.schedule();
    // The cast names what the option chose: the group's one promise of nothing, or this caller's of its result.
    if (group.shared) return group.shared as Promise<Settled<O, P>>;
    return new Promise<O>((resolve, reject) => group.waiters!.push({ resolve, reject })) as Promise<Settled<O, P>>;
  }

  /** The first pending group with room that holds nothing on the input's key, else a new one at the end. */
  private groupFor(input: I): Group<I, O> {
    if (this.key === undefined) {
      const last = this.pending[this.pending.length - 1];
      return last !== undefined && last.inputs.length < this.maxGroup ? last : this.open(undefined);
    }
    const k = this.key(input);
    for (const g of this.pending) {
      if (g.inputs.length < this.maxGroup && !g.keys!.has(k)) {
        g.keys!.add(k);
        return g;
      }
    }
    return this.open(k);
  }

  private open(key: string | undefined): Group<I, O> {
    let shared: Promise<void> | undefined;
    let settle: ((err?: unknown) => void) | undefined;
    if (this.perGroup) {
      shared = new Promise<void>((resolve, reject) => {
        settle = (err) => (err === undefined ? resolve() : reject(err));
      });
      // Every caller awaits it; this only keeps a failure with no caller left from being unhandled.
      shared.catch(() => undefined);
    }
    const group: Group<I, O> = {
      inputs: [], waiters: this.perGroup ? undefined : [], keys: key === undefined ? undefined : new Set([key]), shared, settle,
    };
    this.pending.push(group);
    return group;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.pending.length === 0) return;
    this.scheduled = true;
    // After this turn of the event loop: the requests read in the same turn share one commit.
    setImmediate(this.flushNow);
  }

  private readonly flushNow = (): void => {
    this.scheduled = false;
    void this.flush();
  };

  private async flush(): Promise<void> {
    const group = this.pending.shift();
    if (group === undefined) return;
    this.inFlight++;
    this.schedule();
    try {
      let outs: O[];
      try {
        outs = await this.write(group.inputs);
      } catch (err) {
        await this.failed(group, err);
        return;
      }
      this.hook(group.inputs, outs);
      if (group.settle) group.settle();
      else group.waiters!.forEach((w, i) => w.resolve(outs[i]!));
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }

  private async failed(group: Group<I, O>, err: unknown): Promise<void> {
    if (group.settle) return group.settle(failure(err));
    const waiters = group.waiters!;
    if (!this.retryEach || (waiters.length === 1 && !this.retryAlone)) {
      for (const w of waiters) w.reject(failure(err));
      return;
    }
    await Promise.all(group.inputs.map(async (input, i) => {
      try {
        const outs = await this.write([input]);
        this.hook([input], outs);
        waiters[i]!.resolve(outs[0]!);
      } catch (e) {
        waiters[i]!.reject(failure(e));
      }
    }));
  }

  private hook(inputs: I[], outs: O[]): void {
    try {
      this.committed?.(inputs, outs);
    } catch {
      // Waking readers is best effort: the jobs are stored, and their callers are answered regardless.
    }
  }
}
