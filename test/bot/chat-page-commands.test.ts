import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer, type Person } from './support.js';

/** `GET /client/chats/<bot>/commands`: what the chat page offers when the person types `/`. */
for (const { kind, skip } of await databaseKinds()) {
  describe(`the chat client API's command list (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let alice: Person;
    let chat: ChatApi;
    let token: string;
    before(async () => {
      server = await startBotServer({ db: kind });
      alice = await signedInPerson(server, 'alice');
      chat = new ChatApi(server.botUrl, alice);
      token = await botViaBotFather(chat, 'Cmd', 'cmd_list_bot');
    });
    after(() => server.close());

    const get = async (bot: string, auth: string | null = `Bearer ${alice.token}`) => {
      const res = await fetch(`${server.botUrl}/client/chats/${bot}/commands`, { headers: auth ? { authorization: auth } : {} });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const set = async (params: Record<string, unknown>) => assert.equal((await botApi(server.botUrl, token, 'setMyCommands', params)).status, 200);

    it('answers the private chat\'s list: chat scope, else all_private_chats, else default', async () => {
      assert.deepEqual((await get('cmd_list_bot')).body, { commands: [] });
      await set({ commands: [{ command: 'start', description: 'Start' }] });
      assert.deepEqual((await get('cmd_list_bot')).body, { commands: [{ command: 'start', description: 'Start' }] });
      await set({ commands: [{ command: 'private', description: 'In private' }], scope: { type: 'all_private_chats' } });
      assert.deepEqual((await get('CMD_LIST_BOT')).body, { commands: [{ command: 'private', description: 'In private' }] });
      // The chat scope needs the chat to exist: the person writes first.
      await chat.send('cmd_list_bot', 'hi');
      const updates = await botApi(server.botUrl, token, 'getUpdates');
      const chatId = (updates.body.result as { message: { chat: { id: number } } }[])[0]!.message.chat.id;
      await set({ commands: [{ command: 'mine', description: 'Only alice' }], scope: { type: 'chat', chat_id: chatId } });
      assert.deepEqual((await get('cmd_list_bot')).body, { commands: [{ command: 'mine', description: 'Only alice' }] });
      // Another person sees the all_private_chats list; a language's own list is not the default one.
      const bob = await signedInPerson(server, 'bob');
      assert.deepEqual((await get('cmd_list_bot', `Bearer ${bob.token}`)).body, { commands: [{ command: 'private', description: 'In private' }] });
      // BotFather's /setcommands sets the default list.
      await botApi(server.botUrl, token, 'deleteMyCommands', { scope: { type: 'all_private_chats' } });
      await chat.ask('BotFather', '/setcommands');
      await chat.ask('BotFather', 'cmd_list_bot');
      await chat.ask('BotFather', 'help - How to use me');
      assert.deepEqual((await get('cmd_list_bot', `Bearer ${bob.token}`)).body, { commands: [{ command: 'help', description: 'How to use me' }] });
    });

    it('refuses without a chat token, an unknown bot, and other methods', async () => {
      const none = await get('cmd_list_bot', null);
      assert.equal(none.status, 401);
      assert.equal(none.body.error, 'invalid_token');
      assert.equal((await get('cmd_list_bot', 'Bearer nonsense')).status, 401);
      assert.equal((await get('cmd_list_bot', 'Basic abc')).status, 400);
      const unknown = await get('no_such_bot');
      assert.equal(unknown.status, 404);
      assert.equal(typeof unknown.body.error_description, 'string');
      // A bad username (malformed percent-encoding, too long, odd characters) is a client error, never a 5xx.
      for (const bad of ['%F0', 'x'.repeat(300), '-bot-', '%00', 'a%20b']) {
        const r = await get(bad);
        assert.ok(r.status >= 400 && r.status < 500, `${bad}: ${r.status}`);
        // A URL that cannot be decoded is refused before routing, in the listener's (Bot API) envelope.
        const described = typeof r.body.error === 'string' || (bad === '%F0' && typeof r.body.description === 'string');
        assert.ok(described, `${bad}: ${r.status} ${JSON.stringify(r.body)}`);
      }
      // The other routes naming a bot refused a NUL with a 500 on PostgreSQL before; now 404 as any unknown bot.
      for (const path of ['messages', 'messages?after=0']) {
        const r = await fetch(`${server.botUrl}/client/chats/a%00b/${path}`, { headers: { authorization: `Bearer ${alice.token}` } });
        assert.equal(r.status, 404, path);
      }
      const post = await fetch(`${server.botUrl}/client/chats/cmd_list_bot/commands`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}` } });
      assert.equal(post.status, 405);
      assert.equal(post.headers.get('allow'), 'GET, HEAD');
    });
  });
}
