import { keysConformance } from './conformance/keys.js';
import { rateLimitRacesConformance, rateLimitsConformance } from './conformance/rate-limits.js';
import { redisAdapter, sqlAdapters, twoProcessRedisAdapter, twoProcessSqlAdapters } from './adapters.js';

for (const { name, open, skip } of await sqlAdapters()) {
  keysConformance(name, open, { skip });
  rateLimitsConformance(name, open, { skip, callerClock: true });
}

// Rate limits move to Redis when GATEHOUSE_REDIS_URL is set (src/store/redis).
const redis = await redisAdapter();
rateLimitsConformance(redis.name, redis.open, { skip: redis.skip, callerClock: false });

// Two processes counting on one store: two connections or pools on one database, two on one Redis.
for (const { name, open, skip } of [...(await twoProcessSqlAdapters()), await twoProcessRedisAdapter()]) rateLimitRacesConformance(name, open, { skip });
