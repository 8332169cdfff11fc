import type { Redis } from 'ioredis';
import type { Session } from '../../core/model.js';
import type { SessionStore } from '../../core/ports.js';

/** SADD, then extend the set's expiry to `ttl` unless it already lives longer (PTTL is -1 on a new set). */
const ADD_TO_USER_SET = `
redis.call('SADD', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

/**
 * Records a use in the session's value unless one was recorded at or after
 * ARGV[3]; atomic, so requests of the same minute write once, and KEEPTTL
 * leaves the session's expiry as it was. A session deleted meanwhile stays deleted.
 */
const TOUCH = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local s = cjson.decode(raw)
if type(s.lastUsedAt) == 'number' and s.lastUsedAt >= tonumber(ARGV[3]) then return 0 end
s.lastUsedAt = tonumber(ARGV[1])
if ARGV[2] == '' then s.ip = cjson.null else s.ip = ARGV[2] end
redis.call('SET', KEYS[1], cjson.encode(s), 'KEEPTTL')
return 1`;

/** Moves the session's verifiedAt forward to ARGV[1] (never back), keeping its expiry; 0 when the session is gone. */
const MARK_VERIFIED = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local s = cjson.decode(raw)
if type(s.verifiedAt) == 'number' and s.verifiedAt >= tonumber(ARGV[1]) then return 1 end
s.verifiedAt = tonumber(ARGV[1])
redis.call('SET', KEYS[1], cjson.encode(s), 'KEEPTTL')
return 1`;

/**
 * Sessions in Redis, shared by every Gatehouse process (docs/oauth.md, Single
 * sign-on and Running several processes: any process honours a sign-in). Each
 * session expires by itself; a per-user set lets sign-out-everywhere find them.
 */
export class RedisSessionStore implements SessionStore {
  constructor(private readonly redis: Redis, private readonly prefix = 'gh:') {}

  private key = (idHash: string) => `${this.prefix}session:${idHash}`;
  private userKey = (userId: string) => `${this.prefix}user-sessions:${userId}`;

  async create(s: Session): Promise<void> {
    const ttl = Math.max(1, s.expiresAt - Date.now());
    await this.redis.multi()
      .set(this.key(s.idHash), JSON.stringify(s), 'PX', ttl)
      // The per-user set lives as long as its longest session: a shorter one must not cut it short.
      .eval(ADD_TO_USER_SET, 1, this.userKey(s.userId), s.idHash, String(ttl))
      .exec();
  }

  async get(idHash: string, now: number): Promise<Session | undefined> {
    const raw = await this.redis.get(this.key(idHash));
    if (!raw) return undefined;
    const s = JSON.parse(raw) as Session;
    return s.expiresAt > now ? s : undefined;
  }

  async delete(idHash: string): Promise<void> {
    const raw = await this.redis.get(this.key(idHash));
    const multi = this.redis.multi().del(this.key(idHash));
    if (raw) multi.srem(this.userKey((JSON.parse(raw) as Session).userId), idHash);
    await multi.exec();
  }

  async listForUser(userId: string, now: number): Promise<Session[]> {
    const ids = await this.redis.smembers(this.userKey(userId));
    if (ids.length === 0) return [];
    const raws = await this.redis.mget(...ids.map(this.key));
    // Members whose session expired by itself are tidied up as they are met.
    const gone = ids.filter((_, i) => raws[i] === null);
    if (gone.length) await this.redis.srem(this.userKey(userId), ...gone);
    return raws.flatMap((raw) => (raw ? [JSON.parse(raw) as Session] : []))
      .filter((s) => s.expiresAt > now)
      .sort((a, b) => b.createdAt - a.createdAt);
  }

  async touch(idHash: string, use: { at: number; ip: string | null }, notBefore: number): Promise<boolean> {
    return Number(await this.redis.eval(TOUCH, 1, this.key(idHash), String(use.at), use.ip ?? '', String(notBefore))) === 1;
  }

  async markVerified(idHash: string, at: number): Promise<boolean> {
    return Number(await this.redis.eval(MARK_VERIFIED, 1, this.key(idHash), String(at))) === 1;
  }

  async deleteForUser(userId: string): Promise<number> {
    const ids = await this.redis.smembers(this.userKey(userId));
    if (ids.length === 0) return 0;
    const results = await this.redis.multi().del(...ids.map(this.key)).del(this.userKey(userId)).exec();
    return Number(results?.[0]?.[1] ?? 0);
  }
}
