import type { Redis } from 'ioredis';
import { LocalWakeups, type Wakeups } from '../../core/bot/wakeups.js';

/**
 * Wake-ups between processes over Redis pub/sub (GATEHOUSE_REDIS_URL): a
 * getUpdates waiting in one process wakes when another stores an update,
 * and a newer getUpdates anywhere ends an older one with 409. One channel
 * per topic, subscribed while someone here listens on it.
 */
export class RedisWakeups implements Wakeups {
  private readonly local = new LocalWakeups();
  private readonly counts = new Map<string, number>();
  private pending: Promise<unknown> = Promise.resolve();

  constructor(private readonly pub: Redis, private readonly sub: Redis, private readonly prefix = 'gh:') {
    sub.on('message', (channel: string, message: string) => {
      if (channel.startsWith(prefix)) this.local.publish(channel.slice(prefix.length), message);
    });
  }

  publish(topic: string, message = ''): void {
    this.pub.publish(this.prefix + topic, message).catch(() => {
      // Redis away: the waiting poll still ends at its timeout and reads storage then.
    });
  }

  subscribe(topic: string, listener: (message: string) => void): () => void {
    const off = this.local.subscribe(topic, listener);
    const n = (this.counts.get(topic) ?? 0) + 1;
    this.counts.set(topic, n);
    if (n === 1) this.track(this.sub.subscribe(this.prefix + topic));
    let done = false;
    return () => {
      if (done) return;
      done = true;
      off();
      const left = (this.counts.get(topic) ?? 1) - 1;
      if (left > 0) {
        this.counts.set(topic, left);
      } else {
        this.counts.delete(topic);
        this.track(this.sub.unsubscribe(this.prefix + topic));
      }
    };
  }

  private track(p: Promise<unknown>): void {
    this.pending = Promise.all([this.pending, p.catch(() => undefined)]);
  }

  async ready(): Promise<void> {
    await this.pending;
  }

  async close(): Promise<void> {
    await this.local.close();
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
