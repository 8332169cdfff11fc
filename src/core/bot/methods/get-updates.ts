import { randomUUID } from 'node:crypto';
import type { Update } from '@grammyjs/types';
import { z } from 'zod';
import { TERMINATED, WEBHOOK_ACTIVE, conflict, unauthorized } from '../errors.js';
import { timePart } from '../../oauth/token-key.js';
import { method } from '../method.js';
import { int, updateTypes } from '../params.js';
import type { BotStore, StoredUpdate, UpdateStore } from '../ports.js';
import { Waiter, topics, type Wakeups } from '../wakeups.js';

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));

/** Updates a poll keeps from its wake-ups (beyond, it reads storage as before). */
const MAX_FRESH = 1000;

/**
 * A poll's id: its start time (fixed-width base 36, so ids compare as times
 * do), then a random part that breaks ties the same way in every process.
 */
const newPollId = () => timePart(Date.now()) + randomUUID();
const POLL_ID = /^[0-9a-z]{9}[0-9a-f-]{36}$/;

const isUpdate = (v: unknown): v is Update => typeof v === 'object' && v !== null && typeof (v as Update).update_id === 'number';

/**
 * After a wake-up, the updates from `from` on when this process committed
 * each of them while the poll waited: a run without a gap starting at `from`
 * is exactly what storage would list first (a bot's update_ids commit in
 * order: each allocation holds the bot row until its commit), so it is
 * answered without reading them back. Anything else (no offset, an id
 * committed by another process or not handed over, a gap left by a rolled
 * back allocation) reads storage.
 */
function freshRun(fresh: Map<number, Update>, from: number | undefined, limit: number): Update[] {
  const run: Update[] = [];
  if (from === undefined) return run;
  for (let id = from; run.length < limit; id++) {
    const u = fresh.get(id);
    if (!u) break;
    run.push(u);
  }
  return run;
}

/**
 * getUpdates (Bot API): `offset` confirms every update below it, a negative
 * offset keeps only the last -offset updates; `limit` 1–100; `timeout`
 * 0–50 s of long polling that returns as soon as an update is stored (woken
 * through Wakeups, never by polling the database); a newer call ends an
 * older one with 409. It acts on the bot's row as stored now (webhook,
 * allowed_updates, the token still current: 401 otherwise), which it reads
 * itself: with an offset, in the statement that confirms and lists
 * (UpdateStore.pollAs) rather than in a round trip before it.
 */
export const getUpdates = (d: { bots: BotStore; updates: UpdateStore; wakeups: Wakeups }) => method('getUpdates', {
  params: z.object({ offset: int('offset'), limit: int('limit'), timeout: int('timeout'), allowed_updates: updateTypes('allowed_updates') }),
  async run({ bot, signal }, p) {
    const { wakeups } = d;
    const offset = p.offset ?? 0;
    const limit = clamp(p.limit ?? 100, 1, 100);
    const timeout = clamp(p.timeout ?? 0, 0, 50);
    const tokenHash = bot.tokenHash;
    // Without an offset (a bot's first poll), or for a bot without a token (not from the Bot API), the row is read first.
    const combined = offset > 0 && tokenHash !== null;
    if (!combined) {
      const now = await d.bots.get(bot.id);
      if (!now || now.tokenHash !== tokenHash) throw unauthorized();
      if (now.webhook) throw conflict(WEBHOOK_ACTIVE);
      await keepAllowed(d.bots, bot.id, now.allowedUpdates, p.allowed_updates);
    }

    const pollId = newPollId();
    const pollTopic = topics.poll(bot.id);
    const from = offset > 0 ? offset : undefined;
    let terminated = false;
    // Updates committed in this process since we subscribed, as their writer handed them over (Wakeups.publish's `local`).
    const fresh = new Map<number, Update>();
    // Subscribe before reading, so an update stored in between still wakes us.
    const waiter = new Waiter(wakeups, [topics.updates(bot.id), pollTopic], (topic, message, local) => {
      if (topic !== pollTopic) {
        if (from !== undefined && isUpdate(local) && local.update_id >= from && fresh.size < MAX_FRESH) fresh.set(local.update_id, local);
        return true;
      }
      if (message === pollId) return false;
      // A poll begun before this one announces itself once it has read storage, which may be after this one began:
      // that late word never ends this poll (ours ends it). A later poll's, or setWebhook's, does.
      if (POLL_ID.test(message) && message < pollId) return false;
      terminated = true;
      return true;
    });
    try {
      await waiter.ready();
      const list = () => d.updates.list(bot.id, from, limit);
      let found: StoredUpdate[];
      if (combined) {
        // The bot row's state, the confirmation and the first read in one statement where the store can: the answer
        // still comes after the confirmation has committed, and nothing is confirmed for a changed token or a webhook.
        const polled = await d.updates.pollAs(bot.id, tokenHash, offset, limit);
        if (!polled) throw unauthorized();
        if (polled.webhookSet) throw conflict(WEBHOOK_ACTIVE);
        await keepAllowed(d.bots, bot.id, polled.allowedUpdates, p.allowed_updates);
        found = polled.updates;
      } else {
        found = await (offset < 0 ? d.updates.keepLast(bot.id, -offset).then(list) : list());
      }
      // An older poll of this bot ends with 409 (once this one is known to be the bot's own and allowed).
      if (!signal.aborted) wakeups.publish(pollTopic, pollId);
      const deadline = Date.now() + timeout * 1000;
      for (;;) {
        if (found.length) return found.map((u) => u.update);
        if (terminated) throw conflict(TERMINATED);
        const woken = await waiter.wait(deadline - Date.now(), signal);
        if (terminated) throw conflict(TERMINATED);
        if (!woken) return [];
        const handed = freshRun(fresh, from, limit);
        if (handed.length) return handed;
        found = await list();
      }
    } finally {
      waiter.close();
    }
  },
});

/** allowed_updates as the call gives them, written when they differ from the row's (an absent parameter keeps them). */
async function keepAllowed(bots: BotStore, botId: number, stored: string[] | null, given: string[] | undefined): Promise<void> {
  if (given !== undefined && JSON.stringify(given) !== JSON.stringify(stored ?? [])) await bots.setAllowedUpdates(botId, given);
}
