import type { Redis } from 'ioredis';
import type { RateLimitStore } from '../../core/ports.js';

/**
 * Fixed windows in Redis: INCR and, on the first hit, PEXPIRE, in one Lua
 * script so the counter can never be left without an expiry. Redis's own
 * clock runs the window, so `now` is not used here.
 */
const HIT = `
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return c`;

export class RedisRateLimitStore implements RateLimitStore {
  constructor(private readonly redis: Redis, private readonly prefix = 'gh:') {}

  private key = (k: string) => `${this.prefix}rl:${k}`;

  async hit(key: string, windowMs: number, _now?: number): Promise<number> {
    return Number(await this.redis.eval(HIT, 1, this.key(key), String(windowMs)));
  }

  async peek(key: string, _now?: number): Promise<number> {
    return Number((await this.redis.get(this.key(key))) ?? 0);
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.key(key));
  }
}
