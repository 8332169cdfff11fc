import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newEvent, newId, rfc3339, type NotifyEvent } from '../../src/core/notify/events.js';
import { recordEvent, whileRecording } from '../../src/core/notify/record.js';
import { appendBatcher } from '../../src/store/notify/batch.js';

const failed = (i: number, now = Date.now()) => newEvent('user.login.failed', { user_id: null, username: `u${i}`, ip: '192.0.2.1', reason: 'invalid_credentials' }, now);

/** A batch writer that records each row and commits it when told to. */
function fakeRows() {
  const rows: { id: string; events: NotifyEvent[]; commit(err?: Error): void }[] = [];
  const write = (id: string, events: NotifyEvent[]) => new Promise<void>((resolve, reject) => {
    rows.push({ id, events: [...events], commit: (err) => (err ? reject(err) : resolve()) });
  });
  return { rows, write };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The group commit's appenders share one promise per batch row
 * (src/store/notify/batch.ts): each still settles only once the row holding
 * its own event has committed, and a failed row fails exactly its appenders.
 */
describe('AppendBatcher', () => {
  it('settles an append only when the row holding its event commits; later appends wait for their own row', async () => {
    const { rows, write } = fakeRows();
    let wakeups = 0;
    const batcher = appendBatcher(write, () => wakeups++, true);
    const settled: number[] = [];
    const first = [1, 2, 3].map((i) => batcher.submit(failed(i)).then(() => settled.push(i)));
    await turn();
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0]!.events.map((e) => e.data.username), ['u1', 'u2', 'u3']);
    const second = [4, 5].map((i) => batcher.submit(failed(i)).then(() => settled.push(i)));
    await turn();
    assert.equal(rows.length, 2, 'a second row while the first is in flight');
    assert.deepEqual(settled, [], 'nothing answered before its commit');
    rows[1]!.commit();
    await Promise.all(second);
    assert.deepEqual(settled, [4, 5], 'the second row committed: only its appenders');
    rows[0]!.commit();
    await Promise.all(first);
    assert.deepEqual(settled, [4, 5, 1, 2, 3]);
    assert.equal(wakeups, 2, 'the worker is woken after each commit');
  });

  it('fails exactly the appenders of a row that failed, and writes the next row as usual', async () => {
    const { rows, write } = fakeRows();
    const batcher = appendBatcher(write, () => undefined, false);
    const a = [batcher.submit(failed(1)), batcher.submit(failed(2))];
    await turn();
    const b = batcher.submit(failed(3));
    rows[0]!.commit(new Error('database down'));
    for (const p of a) await assert.rejects(p, /database down/);
    await turn();
    assert.equal(rows.length, 2, 'SQLite: the next row once the failed one is done');
    rows[1]!.commit();
    await b;
  });

  it('splits more than 500 appends of one turn into rows of at most 500, in order', async () => {
    const { rows, write } = fakeRows();
    const batcher = appendBatcher(write, () => undefined, true);
    const all = Array.from({ length: 1203 }, (_, i) => batcher.submit(failed(i)));
    for (let i = 0; i < 5 && rows.length < 3; i++) await turn();
    assert.deepEqual(rows.map((r) => r.events.length), [500, 500, 203]);
    assert.equal(rows.flatMap((r) => r.events).map((e) => e.data.username).join(), Array.from({ length: 1203 }, (_, i) => `u${i}`).join());
    for (const r of rows) r.commit();
    await Promise.all(all);
  });
});

/**
 * The token path signs while its token.issued commits (whileRecording,
 * src/core/notify/record.ts): the answer must still wait for the commit, and
 * a commit that fails while the signature is pending must reach the caller,
 * never surface as an unhandled rejection (which ends the process).
 */
describe('whileRecording', () => {
  const issued = (i: number) => ({ client_id: `c${i}`, user_id: null, scope: [], token_format: 'jwt' as const, jti: `j${i}`, family_id: null, expires_at: rfc3339(0) });

  function recorder(subscribed: boolean | Promise<boolean>) {
    const { rows, write } = fakeRows();
    const batcher = appendBatcher(write, () => undefined, true);
    return { rows, stores: { events: { append: (e: NotifyEvent) => batcher.submit(e), hasSubscriber: () => subscribed } } };
  }

  /** Runs `body`, failing if any promise rejection went unhandled meanwhile. */
  async function noUnhandled(body: () => Promise<void>): Promise<void> {
    const unhandled: unknown[] = [];
    const on = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', on);
    try {
      await body();
      await turn();
      await turn();
    } finally {
      process.off('unhandledRejection', on);
    }
    assert.deepEqual(unhandled, []);
  }

  it('gives the value only once the event has committed, though the work finished first', async () => {
    const { rows, stores } = recorder(true);
    let settled = false;
    const answer = whileRecording(recordEvent(stores, 'token.issued', issued(1), 0), async () => 'signed').then((v) => {
      settled = true;
      return v;
    });
    await turn();
    assert.equal(rows.length, 1);
    assert.equal(settled, false, 'not answered before the commit');
    rows[0]!.commit();
    assert.equal(await answer, 'signed');
  });

  it('fails with the commit while the work is still pending, with no unhandled rejection', async () => {
    await noUnhandled(async () => {
      // A read of the subscriptions first (the cache was stale): the append's promise is a new one.
      const { rows, stores } = recorder(Promise.resolve(true));
      let sign!: (v: string) => void;
      const answer = whileRecording(recordEvent(stores, 'token.issued', issued(2), 0), () => new Promise<string>((resolve) => (sign = resolve)));
      const outcome = assert.rejects(answer, /database down/);
      for (let i = 0; i < 3 && rows.length === 0; i++) await turn();
      rows[0]!.commit(new Error('database down'));
      await turn();
      sign('signed');
      await outcome;
    });
  });

  it('fails with the work when it throws at once, and a failed commit after it goes unreported but handled', async () => {
    await noUnhandled(async () => {
      const { rows, stores } = recorder(Promise.resolve(true));
      const answer = whileRecording(recordEvent(stores, 'token.issued', issued(3), 0), () => {
        throw new Error('no active ES256 signing key');
      });
      await assert.rejects(answer, /no active ES256 signing key/);
      for (let i = 0; i < 3 && rows.length === 0; i++) await turn();
      rows[0]!.commit(new Error('database down'));
    });
  });

  it('is the work itself when nothing is recorded', async () => {
    const { rows, stores } = recorder(false);
    const work = Promise.resolve('signed');
    assert.equal(whileRecording(recordEvent(stores, 'token.issued', issued(4), 0), () => work), work);
    await turn();
    assert.equal(rows.length, 0);
  });
});

describe('newId', () => {
  it('is the prefix, 10 characters of time, 3 of sequence and 13 random, sorting in creation order', () => {
    const t = Date.UTC(2026, 10, 25);
    const ids = Array.from({ length: 40 }, () => newId('msg_', t));
    for (const id of ids) assert.match(id, /^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(new Set(ids.map((id) => id.slice(0, 14))).size, 1, 'one time part within a millisecond');
    assert.deepEqual([...ids].sort(), ids, 'the sequence keeps ids of one millisecond in order');
    assert.equal(new Set(ids).size, ids.length);
    // 2026-11-25T00:00:00Z in Crockford base 32, most significant first.
    let n = t;
    let time = '';
    for (let i = 0; i < 10; i++, n = Math.floor(n / 32)) time = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'[n % 32] + time;
    assert.equal(ids[0]!.slice(4, 14), time);
    const later = newId('msg_', t + 1);
    assert.ok(later > ids.at(-1)!, 'a later millisecond sorts after');
    assert.equal(later.slice(14, 17), '000', 'the sequence starts again');
  });
});

describe('rfc3339', () => {
  it('formats every millisecond as Date#toISOString does, the same one twice in a row included', () => {
    for (const ms of [0, 1, 1, Date.UTC(2026, 10, 25, 5, 3, 20, 123), Date.UTC(2026, 10, 25, 5, 3, 20, 123) + 0.7, Date.UTC(2026, 10, 25, 5, 3, 20, 124), 1]) {
      assert.equal(rfc3339(ms), new Date(ms).toISOString());
    }
    assert.throws(() => rfc3339(Number.NaN), RangeError);
  });
});
