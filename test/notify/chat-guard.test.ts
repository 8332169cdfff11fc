import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CIBA_GRANT_TYPE } from '../../src/core/oauth/ciba-options.js';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi } from '../bot/support.js';
import { BOT, buttonsOf, lastId, linkedPerson, nextMessage, postForm, press, startChatServer, type ChatServer, type LinkedPerson } from '../device/support.js';

/**
 * Issue 24, finding 5: a `chat` token another application holds is worth only
 * the chats: the notification bot's (sign-in approval, device and CIBA
 * approval, one-tap actions) is seen and pressed only through Gatehouse's own
 * chat page. To that token the bot is an unknown bot, with the same 404.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`the notification bot's chat is the chat page's alone (${kind})`, { skip }, () => {
    let server: ChatServer;
    let erin: LinkedPerson;
    let app: { id: string; secret: string | undefined };
    let theirs: ChatApi;
    let token: string;
    const bot = () => server.bot!.url;
    const call = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`${bot()}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    before(async () => {
      server = await startChatServer(kind);
      erin = await linkedPerson(server, 'erin');
      // An application granted only `chat` by erin, which also asks CIBA requests for her.
      app = await server.createClient({ name: 'Chatty app', grantTypes: ['password', CIBA_GRANT_TYPE], redirectUris: [], scope: 'openid user chat', backchannelTokenDeliveryMode: 'poll' });
      const got = await postForm(`${server.url}/oauth/token`, { grant_type: 'password', username: 'erin', password: erin.user.password, scope: 'chat' }, app);
      assert.equal(got.status, 200, JSON.stringify(got.body));
      token = got.body.access_token as string;
      theirs = new ChatApi(bot(), { username: 'erin', token });
    });
    after(async () => {
      await server?.close();
    });

    it('/client/chats lists the notification bot for the chat page only', async () => {
      const names = async (t: string) => ((await (await fetch(`${bot()}/client/chats`, { headers: { authorization: `Bearer ${t}` } })).json()) as { chats: { bot: { username: string } }[] })
        .chats.map((c) => c.bot.username);
      assert.ok((await names(erin.person.token)).includes(BOT));
      const other = await names(token);
      assert.ok(!other.includes(BOT), other.join(' '));
      assert.ok(other.includes('BotFather'), 'the rest of the chats are still there');
    });

    it('its messages, commands and callbacks answer the 404 of an unknown bot', async () => {
      const unknown = 'no_such_alerts_bot';
      const same = (a: { status: number; body: Record<string, unknown> }, b: { status: number; body: Record<string, unknown> }) =>
        assert.deepEqual([a.status, JSON.stringify(a.body).replaceAll(BOT, 'X')], [b.status, JSON.stringify(b.body).replaceAll(unknown, 'X')]);
      for (const [path, init] of [
        ['/messages?after=0', {}],
        ['/messages', { method: 'POST', body: JSON.stringify({ text: '/stop' }) }],
        ['/commands', {}],
        ['/callback', { method: 'POST', body: JSON.stringify({ message_id: 1, data: 'ciba:x' }) }],
      ] as const) {
        const mine = await call(`/client/chats/${BOT}${path}`, init);
        assert.equal(mine.status, 404, `${path}: ${JSON.stringify(mine.body)}`);
        same(mine, await call(`/client/chats/${unknown}${path}`, init));
      }
      // The /stop above never reached the bot: erin's chat is still linked.
      const endpoints = await server.gh.storage.events.endpoints.list({ userId: erin.user.id });
      assert.ok(endpoints.some((e) => e.kind === 'chat' && e.disabledAt === null));
    });

    it('the application cannot approve its own CIBA request; the chat page can', async () => {
      const seen = await lastId(erin.chat);
      const asked = await postForm(`${server.url}/oauth/bc-authorize`, { scope: 'openid user', login_hint: 'erin' }, app);
      assert.equal(asked.status, 200, JSON.stringify(asked.body));
      const msg = await nextMessage(erin.chat, seen, /Chatty app/);
      const approve = buttonsOf(msg).find((b) => b.text === 'Approve')!.callback_data!;
      const pressed = await theirs.press(BOT, msg.message_id, approve);
      assert.equal(pressed.status, 404, JSON.stringify(pressed.body));
      const pending = await postForm(`${server.url}/oauth/token`, { grant_type: CIBA_GRANT_TYPE, auth_req_id: asked.body.auth_req_id as string }, app);
      assert.equal(pending.body.error, 'authorization_pending');
      assert.equal(await press(erin.chat, msg, 'Deny'), 'Denied.');
    });
  });
}
