import { consentsConformance } from './conformance/consents.js';
import { sessionsConformance } from './conformance/sessions.js';
import { redisAdapter, sqlAdapters } from './adapters.js';

for (const { name, open, skip } of await sqlAdapters()) {
  consentsConformance(name, open, { skip });
  sessionsConformance(name, open, { skip });
}

// Sessions move to Redis when GATEHOUSE_REDIS_URL is set (src/store/redis).
const redis = await redisAdapter();
sessionsConformance(redis.name, redis.open, { skip: redis.skip, now: Date.now() });
