import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Update } from '@grammyjs/types';
import { databaseKinds } from '../helpers/db.js';
import { serveProcess, type Node } from '../helpers/processes.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

/**
 * People's messages are group-committed (src/core/bot/group-writes.ts): many
 * people writing to one bot at once share transactions. What must still hold:
 * every message stored once with its own message_id per chat, every update
 * once with its own update_id, ids increasing in commit order, so a bot that
 * confirms an offset never skips an update that commits later.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`people writing to one bot at once (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let chats: ChatApi[];
    let token: string;
    const bot = `crowd_${kind}_bot`;
    before(async () => {
      server = await startBotServer({ db: kind, env: { GATEHOUSE_BOT_FLOOD_PER_CHAT: '0' } });
      chats = await Promise.all(Array.from({ length: 8 }, async (_, i) => new ChatApi(server.botUrl, await signedInPerson(server, `crowd${i}`))));
      token = await botViaBotFather(chats[0]!, 'Crowd', bot);
    });
    after(() => server.close());

    it('200 messages from 8 people in parallel: each stored once, each update once, ids consecutive and per-chat message ids distinct', async () => {
      const sent = await Promise.all(chats.flatMap((c, p) => Array.from({ length: 25 }, (_, k) => c.send(bot, `p${p} m${k}`))));
      assert.equal(sent.length, 200);
      for (const c of chats.keys()) {
        const ids = sent.filter((m) => m.text!.startsWith(`p${c} `)).map((m) => m.message_id);
        assert.equal(new Set(ids).size, 25, 'message ids in one chat are distinct');
      }
      const updates: Update[] = [];
      let offset: number | undefined;
      while (updates.length < 200) {
        const r = await botApi(server.botUrl, token, 'getUpdates', { ...(offset !== undefined ? { offset } : {}), limit: 100 });
        const batch = r.body.result as Update[];
        assert.ok(batch.length > 0, `updates keep coming (${updates.length} so far)`);
        updates.push(...batch);
        offset = batch.at(-1)!.update_id + 1;
      }
      const ids = updates.map((u) => u.update_id);
      ids.forEach((id, i) => i > 0 && assert.equal(id, ids[i - 1]! + 1, 'consecutive update ids'));
      const texts = new Set(updates.map((u) => u.message!.text));
      assert.equal(texts.size, 200, 'every message reached the bot once');
      // Each update carries the stored message as the person got it back.
      const byText = new Map(sent.map((m) => [m.text!, m.message_id]));
      for (const u of updates) assert.equal(u.message!.message_id, byText.get(u.message!.text!));
    });

    it('a long poll waiting at an offset answers the updates committed meanwhile (handed over in-process) exactly as stored', async () => {
      const first = await chats[0]!.send(bot, 'before the poll');
      // offset -1: only the newest update is kept (the earlier test's are gone).
      const [last] = (await botApi(server.botUrl, token, 'getUpdates', { offset: -1, timeout: 0 })).body.result as Update[];
      assert.equal(last!.message!.message_id, first.message_id);
      const offset = last!.update_id + 1;
      await botApi(server.botUrl, token, 'getUpdates', { offset, timeout: 0 });
      const answered: Update[] = [];
      const polling = (async () => {
        let at = offset;
        while (answered.length < 5) {
          const batch = (await botApi(server.botUrl, token, 'getUpdates', { offset: at, timeout: 10 })).body.result as Update[];
          if (!answered.length) await Promise.all(chats.slice(2, 5).map((c, i) => c.send(bot, `later ${i}`)));
          // Each answer as storage holds it (read before anything of it is confirmed).
          assert.deepEqual(batch, (await botApi(server.botUrl, token, 'getUpdates', { offset: at, timeout: 0, limit: batch.length })).body.result);
          answered.push(...batch);
          at = batch.at(-1)!.update_id + 1;
        }
      })();
      // The poll waits before the first two are written: they wake it.
      await new Promise((r) => setTimeout(r, 300));
      await Promise.all(chats.slice(0, 2).map((c, i) => c.send(bot, `meanwhile ${i}`)));
      await polling;
      const ids = answered.map((u) => u.update_id);
      assert.deepEqual(ids, ids.map((_, i) => offset + i), 'consecutive from the offset');
      assert.deepEqual(answered.map((u) => u.message!.text).sort(), ['later 0', 'later 1', 'later 2', 'meanwhile 0', 'meanwhile 1']);
    });
  });
}

const pg = (await databaseKinds()).find((k) => k.kind === 'postgres')!;
describe('people writing to one bot through two processes (postgres)', { skip: pg.skip }, () => {
  const secret = randomBytes(32).toString('base64');
  let server: BotTestServer;
  let other: Node;
  let chats: ChatApi[];
  let token: string;
  before(async () => {
    server = await startBotServer({ db: 'postgres', env: { GATEHOUSE_SECRET_KEY: secret } });
    // The same issuer: a person's token from one process is good at the other.
    other = await serveProcess({ GATEHOUSE_DATABASE_URL: server.databaseUrl, GATEHOUSE_SECRET_KEY: secret, GATEHOUSE_ROLES: 'auth,bot', GATEHOUSE_AUTH_URL: server.url });
    const people = await Promise.all(Array.from({ length: 6 }, (_, i) => signedInPerson(server, `duo${i}`)));
    // Half of the people write through this process, half through the other.
    chats = people.map((p, i) => new ChatApi(i % 2 ? other.ready.bot_api_url : server.botUrl, p));
    token = await botViaBotFather(new ChatApi(server.botUrl, people[0]!), 'Duo', 'duo_bot');
  });
  after(async () => {
    await other?.stop();
    await server?.close();
  });

  it('groups committing in both processes at once neither deadlock nor share an id', async () => {
    const sent = await Promise.all(chats.flatMap((c, p) => Array.from({ length: 20 }, (_, k) => c.send('duo_bot', `p${p} m${k}`))));
    assert.equal(sent.length, 120);
    const r = await botApi(server.botUrl, token, 'getUpdates', { limit: 100 });
    const r2 = await botApi(server.botUrl, token, 'getUpdates', { offset: (r.body.result as Update[]).at(-1)!.update_id + 1, limit: 100 });
    const updates = [...(r.body.result as Update[]), ...(r2.body.result as Update[])];
    assert.equal(new Set(updates.map((u) => u.update_id)).size, 120);
    assert.equal(new Set(updates.map((u) => u.message!.text)).size, 120);
  });
});
