import type { Redis } from 'ioredis';
import type { RateCount, RateLimitStore } from '../../core/ports.js';

/**
 * Fixed windows in Redis: INCR and, on the first hit, PEXPIRE, in one Lua
 * script so the counter can never be left without an expiry, and every key of
 * one call counts in one atomic step. Redis's own clock runs the window, so
 * `now` only turns the time left into an instant.
 */
const HIT = `
local out = {}
for i, k in ipairs(KEYS) do
  local c = redis.call('INCR', k)
  if c == 1 then redis.call('PEXPIRE', k, ARGV[1]) end
  out[2 * i - 1] = c
  out[2 * i] = redis.call('PTTL', k)
end
return out`;

const PEEK = `
local out = {}
for i, k in ipairs(KEYS) do
  out[2 * i - 1] = tonumber(redis.call('GET', k) or '0')
  out[2 * i] = redis.call('PTTL', k)
end
return out`;

/** DECR keeps the key's expiry; a missing or spent counter is left alone. */
const UNHIT = `
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
return 0`;

export class RedisRateLimitStore implements RateLimitStore {
  constructor(private readonly redis: Redis, private readonly prefix = 'gh:') {}

  private key = (k: string) => `${this.prefix}rl:${k}`;

  async hit(key: string, windowMs: number, now: number): Promise<number> {
    return (await this.hitAll([key], windowMs, now))[0]!.count;
  }

  async hitAll(keys: readonly string[], windowMs: number, now: number): Promise<RateCount[]> {
    const distinct = [...new Set(keys)];
    const out = (await this.redis.eval(HIT, distinct.length, ...distinct.map(this.key), String(windowMs))) as number[];
    return inOrder(keys, distinct, out, now);
  }

  async peekAll(keys: readonly string[], now: number): Promise<RateCount[]> {
    const distinct = [...new Set(keys)];
    const out = (await this.redis.eval(PEEK, distinct.length, ...distinct.map(this.key))) as number[];
    return inOrder(keys, distinct, out, now);
  }

  async peek(key: string, now: number): Promise<number> {
    return (await this.peekAll([key], now))[0]!.count;
  }

  async unhit(key: string, _now?: number): Promise<void> {
    await this.redis.eval(UNHIT, 1, this.key(key));
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.key(key));
  }
}

/** The script answers count, PTTL pairs for the distinct keys; PTTL is negative for a missing key. */
function inOrder(keys: readonly string[], distinct: string[], out: number[], now: number): RateCount[] {
  const byKey = new Map(distinct.map((k, i) => {
    const count = Number(out[2 * i]);
    const ttl = Number(out[2 * i + 1]);
    return [k, { count, resetAt: count > 0 && ttl > 0 ? now + ttl : 0 }];
  }));
  return keys.map((k) => byKey.get(k)!);
}
