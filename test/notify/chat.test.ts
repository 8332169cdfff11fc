import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createBot } from '../../src/core/bot/manage.js';
import { startNotifyWorker, type RunningNotifyWorker } from '../../src/infra/notify-worker.js';
import { Agent, parseForm } from '../helpers/agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ChatApi } from '../bot/support.js';
import { chatPagePerson } from '../helpers/chat-page-token.js';
import { admin, ADMIN_TOKEN, Receiver } from './support.js';

const BOT = 'gatehouse_notify_bot';
const PASSWORD = 'correct horse battery staple';

describe('chat notifications through the Bot API', () => {
  let server: TestServer;
  let notify: RunningNotifyWorker;
  let receiver: Receiver;

  before(async () => {
    receiver = await new Receiver().start();
    server = await startServer({ env: { GATEHOUSE_ROLES: 'auth,bot', GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true', GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN } });
    const all = await admin(server.url, 'POST', '/webhooks', { url: `${receiver.url}/all`, events: '*' });
    receiver.secretFor('/all', all.json.secret as string);
    // The operators' notification bot, and the worker sending through Gatehouse's own Bot API with its token.
    const ops = await server.createUser('ops');
    const { token } = await createBot(server.gh.botStorage, server.gh.clock, { ownerUserId: ops.id, username: BOT, name: 'Gatehouse notifications' });
    // Settings are fixed once built: the worker gets a Gatehouse whose config carries the token.
    notify = startNotifyWorker({ ...server.gh, config: { ...server.gh.config, notifyBotToken: token } }, server.logger);
  });
  after(async () => {
    await notify.stop();
    await server.close();
    await receiver.close();
  });

  it('records bot.created with the new bot', async () => {
    assert.ok(await receiver.until(() => [...receiver.unique.values()].some((r) => r.type === 'bot.created' && r.data.username === BOT)));
    assert.deepEqual(receiver.invalid, []);
  });

  it('links a person\'s chat with /start and a one-time link, sends them a new sign-in, stops with /stop', async () => {
    const alice = await chatPagePerson(server, 'alice');
    const chat = new ChatApi(server.bot!.url, alice);
    const [answer] = await chat.replies(BOT, (await chat.send(BOT, '/start')).message_id);
    const link = /https?:\/\/\S+\/notifications\/link\?token=\S+/.exec(answer!.text)?.[0];
    assert.ok(link, answer!.text);

    // Opened while signed out: sign in first, then confirm.
    const browser = new Agent(server.url);
    const target = new URL(link);
    const first = await browser.get(`${target.pathname}${target.search}`);
    assert.equal(first.status, 302);
    const signedIn = await browser.login('alice', PASSWORD, new URL(first.headers.get('location')!, server.url).searchParams.get('return_to')!);
    assert.equal(signedIn.status, 303);
    const confirm = await browser.get(signedIn.headers.get('location')!);
    assert.equal(confirm.status, 200);
    const form = parseForm(await confirm.text());
    const done = await browser.post(form.action, form.fields);
    assert.equal(done.status, 200);
    assert.match(await done.text(), /now go to that chat/);
    const again = await browser.post(form.action, form.fields);
    assert.equal(again.status, 400, 'a link works once');

    // Alice signs in somewhere else: the chat says so.
    const seen = (await chat.messages(BOT)).at(-1)!.message_id;
    const elsewhere = new Agent(server.url);
    assert.equal((await elsewhere.login('alice', PASSWORD)).status, 303);
    const [news] = await chat.replies(BOT, seen);
    assert.match(news!.text, /New sign-in to your account alice from 127\.0\.0\.1/);

    // /stop ends it: the next sign-in is not sent.
    const [stopped] = await chat.replies(BOT, (await chat.send(BOT, '/stop')).message_id);
    assert.match(stopped!.text, /no more notifications/);
    const { json } = await admin(server.url, 'GET', '/webhooks');
    assert.ok(!(json.webhooks as { chat_id?: string; description: string }[]).some((w) => w.description === 'personal security notifications'));
  });

  it('routes event types to an operations chat', async () => {
    const ops = await chatPagePerson(server, 'oncall');
    const chat = new ChatApi(server.bot!.url, ops);
    const hello = await chat.send(BOT, 'hello');
    const created = await admin(server.url, 'POST', '/webhooks', { chat_id: hello.chat.id, events: ['client.created'] });
    assert.equal(created.status, 201);
    await admin(server.url, 'POST', '/clients', { client_name: 'Payroll', redirect_uris: ['https://payroll.example.test/cb'] });
    const msgs = await chat.replies(BOT, hello.message_id, 2);
    assert.ok(msgs.some((m) => /client\.created/.test(m.text) && /Payroll/.test(m.text)), msgs.map((m) => m.text).join('\n'));
  });
});
