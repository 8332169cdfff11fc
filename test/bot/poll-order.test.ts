import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import { getUpdates } from '../../src/core/bot/methods/get-updates.js';
import type { BotRecord } from '../../src/core/bot/ports.js';
import { LocalWakeups, topics } from '../../src/core/bot/wakeups.js';
import type { SqlStorage } from '../../src/store/index.js';
import { freshStorage, hashOf } from '../store/fixtures.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Which getUpdates ends which (Bot API: a newer call ends an older one with
 * 409). A poll announces itself on the bot's poll topic once it has read
 * storage, so an older poll slow to read (PostgreSQL, a loaded machine) can
 * announce itself after a newer one began: that late announcement must not
 * end the newer poll (seen as grammY's bot.stop() answered 409 under the full
 * suite: its closing getUpdates was ended by the long poll it had just aborted).
 */
describe('getUpdates: only a newer poll ends an older one', () => {
  let storage: SqlStorage;
  let close: () => Promise<void>;
  let bot: BotRecord;
  const wakeups = new LocalWakeups();
  before(async () => {
    ({ storage, close } = await freshStorage('sqlite'));
    const id = randomInt(1_000_000, 2 ** 40);
    await storage.bot.bots.create({ id, username: `p${id}_bot`, name: 'P', ownerUserId: null, tokenHash: hashOf(`p${id}`), createdAt: Date.now() });
    bot = (await storage.bot.bots.get(id))!;
  });
  after(() => close());

  /** A long poll of `ms` and its id as it announced it. */
  async function poll(ms: number) {
    const method = getUpdates({ bots: storage.bot.bots, updates: storage.bot.updates, wakeups });
    let announced!: string;
    const off = wakeups.subscribe(topics.poll(bot.id), (m) => (announced ??= m));
    const answer = method.run({ bot, signal: new AbortController().signal }, { offset: undefined, limit: undefined, timeout: ms / 1000, allowed_updates: undefined })
      .then(() => 200, (e: { status?: number }) => e.status ?? 500);
    for (let i = 0; i < 100 && announced === undefined; i++) await sleep(5);
    off();
    assert.ok(announced, 'the poll announced itself');
    return { answer, id: announced };
  }

  it('an older poll announcing itself late does not end the newer one', async () => {
    const older = await poll(1000);
    const newer = await poll(1000);
    assert.equal(await older.answer, 409, 'the newer poll ended the older one');
    // The older poll's announcement again, as if it had come only now.
    wakeups.publish(topics.poll(bot.id), older.id);
    assert.equal(await newer.answer, 200, 'the newer poll ran to its timeout');
  });

  it('a poll begun later, another process\'s included, ends this one; so does setWebhook', async () => {
    const first = await poll(2000);
    wakeups.publish(topics.poll(bot.id), `zzzzzzzzz${randomUUID()}`);
    assert.equal(await first.answer, 409);
    const second = await poll(2000);
    wakeups.publish(topics.poll(bot.id), 'webhook');
    assert.equal(await second.answer, 409);
  });
});
