import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEGRADED_POLL_MS, LocalWakeups, TopicCounts, Waiter } from '../../src/core/bot/wakeups.js';

/** Wake-ups that say they are degraded (Redis away); `degradedPollMs` set per test (absent: the default). */
class Degraded extends LocalWakeups {
  degraded(): boolean {
    return true;
  }

  degradedPollMs?(): number;
}

const timed = async (p: Promise<boolean>) => {
  const start = performance.now();
  const woken = await p;
  return { woken, ms: performance.now() - start };
};

/**
 * The long-poll waiter (src/core/bot/wakeups.ts): woken by a message, or at
 * its timeout; while wake-ups are degraded it returns every so often so its
 * caller re-reads storage, as often as the wake-ups ask (the PostgreSQL relay
 * listening: seldom), never a read per waiter twice a second by default then.
 */
describe('Waiter', () => {
  it('wakes on a message published after it subscribed, even before wait is called', async () => {
    const w = new LocalWakeups();
    const waiter = new Waiter(w, ['t']);
    w.publish('t', 'x');
    assert.equal((await timed(waiter.wait(5000))).woken, true);
    waiter.close();
  });

  it('times out with false when nothing comes and wake-ups are healthy', async () => {
    const waiter = new Waiter(new LocalWakeups(), ['t']);
    const r = await timed(waiter.wait(120));
    assert.equal(r.woken, false);
    assert.ok(r.ms >= 100, `returned after ${r.ms} ms`);
    waiter.close();
  });

  it('degraded: returns true at the wake-ups\' poll interval, or every DEGRADED_POLL_MS without one', async () => {
    const relayed = new Degraded();
    relayed.degradedPollMs = () => 60;
    const fast = new Waiter(relayed, ['t']);
    const r = await timed(fast.wait(5000));
    assert.equal(r.woken, true);
    assert.ok(r.ms >= 50 && r.ms < 1000, `re-read after ${r.ms} ms`);
    fast.close();

    const plain = new Waiter(new Degraded(), ['t']);
    const d = await timed(plain.wait(5000));
    assert.equal(d.woken, true);
    assert.ok(d.ms >= DEGRADED_POLL_MS - 20 && d.ms < 3000, `re-read after ${d.ms} ms`);
    plain.close();
  });

  it('degraded with an interval longer than the wait: times out with false', async () => {
    const relayed = new Degraded();
    relayed.degradedPollMs = () => 5000;
    const waiter = new Waiter(relayed, ['t']);
    assert.equal((await timed(waiter.wait(100))).woken, false);
    waiter.close();
  });
});

describe('TopicCounts', () => {
  const counting = (counts: TopicCounts, log: string[], topic = 't') =>
    counts.add(topic, () => log.push('off'), () => log.push(`first ${topic}`), () => log.push(`last ${topic}`));

  it('tells the relay of a topic once, and of its end only after the linger with nobody back', async () => {
    const counts = new TopicCounts(60);
    const log: string[] = [];
    const a = counting(counts, log);
    const b = counting(counts, log);
    a();
    a();
    b();
    assert.deepEqual(log, ['first t', 'off', 'off']);
    assert.deepEqual([...counts.topics()], ['t']);
    // The next poll comes back within the linger: the relay hears nothing.
    const c = counting(counts, log);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(log, ['first t', 'off', 'off']);
    c();
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(log, ['first t', 'off', 'off', 'off', 'last t']);
    assert.deepEqual([...counts.topics()], []);
    counting(counts, log)();
    assert.equal(log.at(-2), 'first t');
  });

  it('without a linger, the last unsubscribe ends the topic at once', () => {
    const counts = new TopicCounts(0);
    const log: string[] = [];
    counting(counts, log, 'x')();
    assert.deepEqual(log, ['first x', 'off', 'last x']);
  });
});
