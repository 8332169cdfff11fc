import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BOT_CACHE_TTL_MS } from '../../src/store/bot/bots.js';
import { databaseKinds } from '../helpers/db.js';
import { serveProcess, type Node } from '../helpers/processes.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

const TOKEN = /(?<![0-9])(\d+):([A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])/;

/**
 * Bots are remembered by token hash for a moment (src/store/bot/bots.ts), as
 * clients are. What must hold: in the process that revokes or deletes, the
 * old token is refused at once; in another process sharing the database, at
 * once for the methods that act on the bot's row (getUpdates, webhooks), and
 * for the others within the cache's lifetime.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`a revoked bot token in two processes (${kind})`, { skip }, () => {
    const secret = randomBytes(32).toString('base64');
    let server: BotTestServer;
    let other: Node;
    let chat: ChatApi;
    // Two processes share a SQLite database only in a file.
    const dir = kind === 'sqlite' ? mkdtempSync(join(tmpdir(), 'gh-bot-cache-')) : undefined;
    before(async () => {
      const file: Record<string, string> = dir ? { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}` } : {};
      server = await startBotServer({ db: kind, env: { GATEHOUSE_SECRET_KEY: secret, ...file } });
      other = await serveProcess({ GATEHOUSE_DATABASE_URL: server.databaseUrl, ...file, GATEHOUSE_SECRET_KEY: secret, GATEHOUSE_ROLES: 'bot', GATEHOUSE_AUTH_URL: server.url });
      chat = new ChatApi(server.botUrl, await signedInPerson(server, `rev_${kind}`));
    });
    after(async () => {
      await other?.stop();
      await server?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('the revoking process refuses the old token at once, the other within the cache lifetime (getUpdates at once)', async () => {
      const token = await botViaBotFather(chat, 'Revoked', `revoked_${kind}_bot`);
      const there = other.ready.bot_api_url;
      // Both processes have just served (and so remembered) the token.
      assert.equal((await botApi(server.botUrl, token, 'getMe')).status, 200);
      assert.equal((await botApi(there, token, 'getMe')).status, 200);
      assert.equal((await botApi(there, token, 'getUpdates')).status, 200);

      assert.match(await chat.ask('BotFather', '/revoke'), /Choose a bot/);
      const fresh = TOKEN.exec(await chat.ask('BotFather', `@revoked_${kind}_bot`))?.[0];
      assert.ok(fresh && fresh !== token);
      const revokedAt = performance.now();
      assert.equal((await botApi(server.botUrl, token, 'getMe')).status, 401, 'refused at once where it was revoked');
      assert.equal((await botApi(there, token, 'getUpdates')).status, 401, 'getUpdates reads the bot row: refused at once everywhere');
      assert.equal((await botApi(there, fresh, 'getMe')).status, 200, 'the new token works at once in the other process (unknown hashes are never cached)');
      assert.equal((await botApi(there, token, 'getMe')).status, 401, 'getMe reads the bot row too (its name may have changed): refused at once everywhere');

      // The other process: refused once its memory of the old token lapses.
      let refusedAfter: number | undefined;
      while (refusedAfter === undefined && performance.now() - revokedAt < BOT_CACHE_TTL_MS + 5_000) {
        if ((await botApi(there, token, 'sendMessage', { chat_id: 1, text: 'x' })).status === 401) refusedAfter = performance.now() - revokedAt;
        else await sleep(50);
      }
      assert.ok(refusedAfter !== undefined, 'the old token is refused in the other process');
      // The lifetime, plus the time one request takes on a loaded machine.
      assert.ok(refusedAfter <= BOT_CACHE_TTL_MS + 1_500, `refused ${Math.round(refusedAfter)} ms after the revocation`);
      assert.equal((await botApi(there, token, 'sendMessage', { chat_id: 1, text: 'x' })).status, 401, 'and stays refused');
    });
  });
}
