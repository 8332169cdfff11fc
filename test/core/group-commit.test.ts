import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCommit, MAX_GROUP, type GroupCommitOptions, type Promises } from '../../src/core/group-commit.js';

/**
 * The one group-commit engine (src/core/group-commit.ts), with a write that
 * records each group and commits (or fails) it when the test says so: what it
 * promises is about order and timing, so the test holds every commit.
 */
interface Write {
  inputs: string[];
  commit(): void;
  fail(err?: unknown): void;
}

function queue<P extends Promises = 'per-caller'>(opts: GroupCommitOptions<string, string, P> = {}) {
  const writes: Write[] = [];
  const events: string[] = [];
  const commit = new GroupCommit<string, string, P>((inputs) => new Promise<string[]>((resolve, reject) => {
    writes.push({
      inputs: [...inputs],
      commit: () => resolve(inputs.map((i) => `${i}!`)),
      fail: (err = new Error(`group ${inputs.join(',')} failed`)) => reject(err),
    });
  }), {
    ...opts,
    committed: (inputs, outs) => {
      events.push(`committed ${inputs.join(',')} -> ${outs.join(',')}`);
      opts.committed?.(inputs, outs);
    },
  });
  return { writes, events, commit };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
async function turns(n = 3): Promise<void> {
  for (let i = 0; i < n; i++) await turn();
}

describe('GroupCommit', () => {
  it('writes the jobs of one turn as one group in submission order, the next ones after, and answers each after its own commit', async () => {
    const { writes, events, commit } = queue();
    const settled: string[] = [];
    const first = ['a', 'b', 'c'].map((i) => commit.submit(i).then((o) => void settled.push(o)));
    assert.equal(writes.length, 0, 'nothing is written in the turn the jobs come in');
    await turn();
    assert.deepEqual(writes.map((w) => w.inputs), [['a', 'b', 'c']]);
    const second = ['d', 'e'].map((i) => commit.submit(i).then((o) => void settled.push(o)));
    await turns();
    assert.equal(writes.length, 1, 'one group in flight by default: the next waits');
    assert.deepEqual(settled, [], 'nothing answered before its commit');
    writes[0]!.commit();
    await Promise.all(first);
    assert.deepEqual(settled, ['a!', 'b!', 'c!'], "each caller gets its own job's result");
    await turns();
    assert.deepEqual(writes.map((w) => w.inputs), [['a', 'b', 'c'], ['d', 'e']]);
    writes[1]!.commit();
    await Promise.all(second);
    assert.deepEqual(settled, ['a!', 'b!', 'c!', 'd!', 'e!']);
    assert.deepEqual(events, ['committed a,b,c -> a!,b!,c!', 'committed d,e -> d!,e!']);
  });

  it(`splits a turn's jobs into groups of at most maxGroup (${MAX_GROUP} by default), in order`, async () => {
    const { writes, commit } = queue({ maxInFlight: 10 });
    const all = Array.from({ length: 2 * MAX_GROUP + 3 }, (_, i) => commit.submit(`j${i}`));
    await turns();
    assert.deepEqual(writes.map((w) => w.inputs.length), [MAX_GROUP, MAX_GROUP, 3]);
    assert.deepEqual(writes.flatMap((w) => w.inputs), Array.from({ length: 2 * MAX_GROUP + 3 }, (_, i) => `j${i}`));
    for (const w of writes) w.commit();
    await Promise.all(all);

    const small = queue({ maxGroup: 2, maxInFlight: 10 });
    const some = ['a', 'b', 'c', 'd', 'e'].map((i) => small.commit.submit(i));
    await turns();
    assert.deepEqual(small.writes.map((w) => w.inputs), [['a', 'b'], ['c', 'd'], ['e']]);
    for (const w of small.writes) w.commit();
    await Promise.all(some);
  });

  it('holds at most maxInFlight groups in flight; a freed slot takes the oldest waiting group', async () => {
    const { writes, commit } = queue({ maxInFlight: 2, maxGroup: 1 });
    const all = ['a', 'b', 'c', 'd'].map((i) => commit.submit(i));
    await turns();
    assert.deepEqual(writes.map((w) => w.inputs), [['a'], ['b']]);
    writes[1]!.commit();
    await all[1];
    await turns();
    assert.deepEqual(writes.map((w) => w.inputs), [['a'], ['b'], ['c']], 'one slot freed: one more group');
    writes[0]!.commit();
    writes[2]!.commit();
    await turns();
    assert.deepEqual(writes.map((w) => w.inputs), [['a'], ['b'], ['c'], ['d']]);
    writes[3]!.commit();
    assert.deepEqual(await Promise.all(all), ['a!', 'b!', 'c!', 'd!']);
  });

  it("keeps jobs on one key out of one group, and lets no job overtake an earlier one on its key", async () => {
    const { writes, commit } = queue({ maxInFlight: 10, maxGroup: 3, key: (i) => i[0]! });
    const all = ['a1', 'a2', 'b1', 'a3', 'c1', 'b2', 'd1'].map((i) => commit.submit(i));
    await turns();
    // Greedy in submission order: a job joins the first group with room that holds nothing on its key.
    assert.deepEqual(writes.map((w) => w.inputs), [['a1', 'b1', 'c1'], ['a2', 'b2', 'd1'], ['a3']]);
    for (const w of writes) w.commit();
    await Promise.all(all);
  });

  describe("onFailure 'retry-each' (per-caller default)", () => {
    it('writes a failed group again job by job: each caller gets its own outcome, and committed runs per job written', async () => {
      const { writes, events, commit } = queue();
      const outcomes = ['a', 'b', 'c'].map((i) => commit.submit(i).then((o) => o, (e: Error) => `error: ${e.message}`));
      await turn();
      writes[0]!.fail();
      await turns();
      assert.deepEqual(writes.slice(1).map((w) => w.inputs), [['a'], ['b'], ['c']], 'every job alone, at once');
      writes[1]!.commit();
      writes[2]!.fail(new Error('b is a duplicate'));
      writes[3]!.commit();
      assert.deepEqual(await Promise.all(outcomes), ['a!', 'error: b is a duplicate', 'c!']);
      assert.deepEqual(events, ['committed a -> a!', 'committed c -> c!']);
    });

    it('fails a lone job with its error without writing it again, unless retryAlone', async () => {
      const lone = queue();
      const p = lone.commit.submit('a');
      await turn();
      lone.writes[0]!.fail(new Error('deadlock detected'));
      await assert.rejects(p, /deadlock detected/);
      await turns();
      assert.equal(lone.writes.length, 1);

      const again = queue({ retryAlone: true });
      const q = again.commit.submit('a');
      await turn();
      again.writes[0]!.fail(new Error('deadlock detected'));
      await turns();
      assert.deepEqual(again.writes.map((w) => w.inputs), [['a'], ['a']], 'a second chance');
      again.writes[1]!.commit();
      assert.equal(await q, 'a!');
    });

    it('writes the next group as usual after a failure', async () => {
      const { writes, commit } = queue();
      const a = commit.submit('a');
      await turn();
      const b = commit.submit('b');
      writes[0]!.fail();
      await assert.rejects(a);
      await turns();
      assert.deepEqual(writes.map((w) => w.inputs), [['a'], ['b']]);
      writes[1]!.commit();
      assert.equal(await b, 'b!');
    });
  });

  it("onFailure 'fail-group': every caller of a failed group gets its error, nothing is written again, the next group is", async () => {
    const { writes, events, commit } = queue({ onFailure: 'fail-group' });
    const first = ['a', 'b'].map((i) => commit.submit(i));
    await turn();
    const later = commit.submit('c');
    writes[0]!.fail(new Error('database down'));
    for (const p of first) await assert.rejects(p, /database down/);
    await turns();
    assert.deepEqual(writes.map((w) => w.inputs), [['a', 'b'], ['c']]);
    writes[1]!.commit();
    assert.equal(await later, 'c!');
    assert.deepEqual(events, ['committed c -> c!']);
  });

  describe("promises 'per-group'", () => {
    it("gives a group's callers one promise, settled when the group commits; a later group has its own", async () => {
      const { writes, events, commit } = queue({ promises: 'per-group', maxInFlight: 2 });
      const a = commit.submit('a');
      const b = commit.submit('b');
      assert.equal(a, b, 'one promise for the group, nothing allocated per job');
      await turn();
      const c = commit.submit('c');
      assert.notEqual(c, a);
      await turns();
      assert.deepEqual(writes.map((w) => w.inputs), [['a', 'b'], ['c']]);
      let firstSettled = false;
      void a.then(() => (firstSettled = true));
      writes[1]!.commit();
      assert.equal(await c, undefined);
      assert.equal(firstSettled, false, 'a later group committing first answers only its own callers');
      writes[0]!.commit();
      await a;
      assert.deepEqual(events, ['committed c -> c!', 'committed a,b -> a!,b!']);
    });

    it('fails the whole group with the error, leaving no unhandled rejection when no caller waits', async () => {
      const unhandled: unknown[] = [];
      const on = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', on);
      try {
        const { writes, commit } = queue({ promises: 'per-group' });
        const p = commit.submit('a');
        commit.submit('b');
        await turn();
        writes[0]!.fail(new Error('database down'));
        await assert.rejects(p, /database down/);
        await turns();
        assert.equal(writes.length, 1, 'not written again');
      } finally {
        process.off('unhandledRejection', on);
      }
      assert.deepEqual(unhandled, []);
    });

    it("refuses 'retry-each', which a shared promise cannot report", () => {
      const opts = { promises: 'per-group', onFailure: 'retry-each' } as unknown as GroupCommitOptions<string, string, 'per-group'>;
      assert.throws(() => new GroupCommit<string, string, 'per-group'>(async (i) => i, opts), TypeError);
    });
  });

  it('runs committed before the callers hear, and answers them even when it throws', async () => {
    const order: string[] = [];
    const { writes, commit } = queue({
      committed: () => {
        order.push('committed');
        throw new Error('wake-up failed');
      },
    });
    const p = commit.submit('a').then((o) => order.push(`answered ${o}`));
    await turn();
    writes[0]!.commit();
    await p;
    assert.deepEqual(order, ['committed', 'answered a!']);
  });
});
