import { randomUUID } from 'node:crypto';
import type { Update } from '@grammyjs/types';
import { TERMINATED, WEBHOOK_ACTIVE, conflict } from '../errors.js';
import type { MethodContext } from '../methods.js';
import { int, stringList, type BotParams } from '../params.js';
import { Waiter, topics } from '../wakeups.js';

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));

/**
 * getUpdates (Bot API): `offset` confirms every update below it, a negative
 * offset keeps only the last -offset updates; `limit` 1–100; `timeout`
 * 0–50 s of long polling that returns as soon as an update is stored (woken
 * through Wakeups, never by polling the database); a newer call ends an
 * older one with 409.
 */
export async function getUpdates({ service, bot, signal }: MethodContext, p: BotParams): Promise<Update[]> {
  const { storage, wakeups } = service.deps;
  if (bot.webhook) throw conflict(WEBHOOK_ACTIVE);
  const offset = int(p, 'offset', 0);
  const limit = clamp(int(p, 'limit', 100), 1, 100);
  const timeout = clamp(int(p, 'timeout', 0), 0, 50);
  const allowed = stringList(p, 'allowed_updates');
  if (allowed !== undefined && JSON.stringify(allowed) !== JSON.stringify(bot.allowedUpdates ?? [])) {
    await storage.bots.setAllowedUpdates(bot.id, allowed);
  }

  const pollId = randomUUID();
  const pollTopic = topics.poll(bot.id);
  let terminated = false;
  // Subscribe before reading, so an update stored in between still wakes us.
  const waiter = new Waiter(wakeups, [topics.updates(bot.id), pollTopic], (topic, message) => {
    if (topic !== pollTopic) return true;
    if (message === pollId) return false;
    terminated = true;
    return true;
  });
  try {
    await waiter.ready();
    wakeups.publish(pollTopic, pollId);
    if (offset > 0) await storage.updates.deleteBelow(bot.id, offset);
    else if (offset < 0) await storage.updates.keepLast(bot.id, -offset);
    const deadline = Date.now() + timeout * 1000;
    for (;;) {
      const found = await storage.updates.list(bot.id, offset > 0 ? offset : undefined, limit);
      if (found.length) return found.map((u) => u.update);
      if (terminated) throw conflict(TERMINATED);
      const woken = await waiter.wait(deadline - Date.now(), signal);
      if (terminated) throw conflict(TERMINATED);
      if (!woken) return [];
    }
  } finally {
    waiter.close();
  }
}
