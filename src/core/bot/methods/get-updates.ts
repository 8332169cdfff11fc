import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { TERMINATED, WEBHOOK_ACTIVE, conflict } from '../errors.js';
import { method } from '../method.js';
import { int, updateTypes } from '../params.js';
import type { BotStore, StoredUpdate, UpdateStore } from '../ports.js';
import { Waiter, topics, type Wakeups } from '../wakeups.js';

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));

/**
 * getUpdates (Bot API): `offset` confirms every update below it, a negative
 * offset keeps only the last -offset updates; `limit` 1–100; `timeout`
 * 0–50 s of long polling that returns as soon as an update is stored (woken
 * through Wakeups, never by polling the database); a newer call ends an
 * older one with 409.
 */
export const getUpdates = (d: { bots: BotStore; updates: UpdateStore; wakeups: Wakeups }) => method('getUpdates', {
  params: z.object({ offset: int('offset'), limit: int('limit'), timeout: int('timeout'), allowed_updates: updateTypes('allowed_updates') }),
  currentBot: true,
  async run({ bot, signal }, p) {
    const { wakeups } = d;
    if (bot.webhook) throw conflict(WEBHOOK_ACTIVE);
    const offset = p.offset ?? 0;
    const limit = clamp(p.limit ?? 100, 1, 100);
    const timeout = clamp(p.timeout ?? 0, 0, 50);
    const allowed = p.allowed_updates;
    if (allowed !== undefined && JSON.stringify(allowed) !== JSON.stringify(bot.allowedUpdates ?? [])) {
      await d.bots.setAllowedUpdates(bot.id, allowed);
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
      // A caller already gone (a client aborting its long poll to stop) ends no newer poll.
      if (!signal.aborted) wakeups.publish(pollTopic, pollId);
      const from = offset > 0 ? offset : undefined;
      const list = () => d.updates.list(bot.id, from, limit);
      // The confirmation and the first read in one statement where the store can (UpdateStore.confirmAndList): the
      // answer still comes after the confirmation has committed.
      let first: Promise<StoredUpdate[]>;
      if (offset > 0) first = d.updates.confirmAndList(bot.id, offset, limit);
      else first = offset < 0 ? d.updates.keepLast(bot.id, -offset).then(list) : list();
      const deadline = Date.now() + timeout * 1000;
      for (let round = 0; ; round++) {
        const found = await (round === 0 ? first : list());
        if (found.length) return found.map((u) => u.update);
        if (terminated) throw conflict(TERMINATED);
        const woken = await waiter.wait(deadline - Date.now(), signal);
        if (terminated) throw conflict(TERMINATED);
        if (!woken) return [];
      }
    } finally {
      waiter.close();
    }
  },
});
