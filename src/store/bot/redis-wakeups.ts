import type { Redis } from 'ioredis';
import { DEGRADED_POLL_MS, LocalWakeups, TopicCounts, type Wakeups } from '../../core/bot/wakeups.js';
import type { PgWakeupRelay } from './pg-wakeups.js';

/** While Redis is away and the PostgreSQL relay listens: how often waiters re-read storage. */
const RELAYED_POLL_MS = 5000;

/**
 * Wake-ups between processes over Redis pub/sub (GATEHOUSE_REDIS_URL): a
 * getUpdates waiting in one process wakes when another stores an update,
 * and a newer getUpdates anywhere ends an older one with 409. One channel
 * per topic, subscribed while someone here listens on it.
 */
export class RedisWakeups implements Wakeups {
  private readonly local = new LocalWakeups();
  private readonly counts = new TopicCounts();
  private pending: Promise<unknown> = Promise.resolve();

  constructor(private readonly pub: Redis, private readonly sub: Redis, private readonly prefix = 'gh:', private readonly relay?: PgWakeupRelay) {
    const deliver = (key: string, message: string) => {
      if (key.startsWith(prefix)) this.local.publish(key.slice(prefix.length), message);
    };
    sub.on('message', deliver);
    relay?.onMessage(deliver);
    // ioredis re-subscribes only what once succeeded; topics subscribed while Redis was away are subscribed now.
    sub.on('ready', () => {
      for (const topic of this.counts.topics()) this.track(this.sub.subscribe(this.prefix + topic));
    });
  }

  /** Redis away: waiters also re-read storage every so often (Waiter), and publishing goes through the relay. */
  degraded(): boolean {
    return this.pub.status !== 'ready' || this.sub.status !== 'ready';
  }

  /**
   * With the PostgreSQL relay listening, wake-ups (and the 409 rule) still
   * arrive through it, so waiters re-read storage only for a publisher whose
   * own relay is down too: every few seconds, not a read per waiter twice a
   * second (a polling storm on the database that is still up).
   */
  degradedPollMs(): number {
    return this.relay?.connected() ? RELAYED_POLL_MS : DEGRADED_POLL_MS;
  }

  /** This process's listeners hear it back from Redis too, so a publisher's `local` value is not kept: they read storage. */
  publish(topic: string, message = ''): void {
    if (this.pub.status !== 'ready') return this.publishWithoutRedis(topic, message);
    this.pub.publish(this.prefix + topic, message).catch(() => this.publishWithoutRedis(topic, message));
  }

  /** Through PostgreSQL to every process, or at least to the waiters in this one. */
  private publishWithoutRedis(topic: string, message: string): void {
    if (!this.relay?.publish(this.prefix + topic, message)) this.local.publish(topic, message);
  }

  subscribe(topic: string, listener: (message: string, local?: unknown) => void): () => void {
    return this.counts.add(topic, this.local.subscribe(topic, listener),
      () => this.track(this.sub.subscribe(this.prefix + topic)),
      () => this.track(this.sub.unsubscribe(this.prefix + topic)));
  }

  private track(p: Promise<unknown>): void {
    this.pending = Promise.all([this.pending, p.catch(() => undefined)]);
  }

  async ready(): Promise<void> {
    await this.pending;
  }

  async close(): Promise<void> {
    await this.local.close();
    await this.relay?.close();
    this.sub.disconnect();
    this.pub.disconnect();
  }
}

/** Takes the lease when free, or extends it when it is already ours (one atomic script). */
const ACQUIRE = `local v = redis.call('GET', KEYS[1])
if v == false then return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) and 1 or 0 end
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0`;

/** Webhook delivery leases in Redis, one per bot, so several processes never deliver the same bot's updates. */
export function redisDeliveryLease(redis: Redis, prefix: string, owner: string): { acquire(botId: number, ms: number): Promise<boolean> } {
  return {
    async acquire(botId, ms) {
      try {
        return (await redis.eval(ACQUIRE, 1, `${prefix}deliver:${botId}`, owner, String(ms))) === 1;
      } catch {
        return false;
      }
    },
  };
}
