import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Bot, webhookCallback } from 'grammy';
import { Telegraf } from 'telegraf';
import { message } from 'telegraf/filters';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

async function listen(handler: RequestListener): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const bodyOf = (req: IncomingMessage) => new Promise<string>((resolve) => {
  let s = '';
  req.on('data', (c) => (s += c));
  req.on('end', () => resolve(s));
});

describe('setWebhook refuses private and plain-HTTP targets by default', () => {
  let server: BotTestServer;
  let token: string;
  before(async () => {
    server = await startBotServer();
    token = await botViaBotFather(new ChatApi(server.botUrl, await signedInPerson(server, 'erin')), 'Hooky', 'hooky_ssrf_bot');
  });
  after(() => server.close());

  it('answers with the official descriptions', async () => {
    const set = (url: string, extra: Record<string, unknown> = {}) => botApi(server.botUrl, token, 'setWebhook', { url, ...extra });
    const cases: [string, string][] = [
      ['http://127.0.0.1:8443/hook', 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook'],
      ['https://127.0.0.1/hook', 'Bad Request: bad webhook: IP address 127.0.0.1 is reserved'],
      ['https://10.1.2.3:8443/hook', 'Bad Request: bad webhook: IP address 10.1.2.3 is reserved'],
      ['https://[::1]/hook', 'Bad Request: bad webhook: IP address ::1 is reserved'],
      ['https://169.254.169.254/latest/meta-data', 'Bad Request: bad webhook: IP address 169.254.169.254 is reserved'],
      ['https://localhost/hook', 'Bad Request: bad webhook: IP address'],
      ['https://127.0.0.1:1234/hook', 'Bad Request: bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443'],
      ['not a url', 'Bad Request: bad webhook: Failed to resolve host: Name or service not known'],
    ];
    for (const [url, description] of cases) {
      const r = await set(url);
      assert.equal(r.status, 400, url);
      assert.ok(String(r.body.description).startsWith(description), `${url}: ${r.body.description}`);
    }
    const secret = await set('https://10.0.0.1/', { secret_token: 'bad token!' });
    assert.equal(secret.status, 400);
    const info = await botApi(server.botUrl, token, 'getWebhookInfo');
    assert.deepEqual(info.body, { ok: true, result: { url: '', has_custom_certificate: false, pending_update_count: 0 } });
    assert.deepEqual((await botApi(server.botUrl, token, 'deleteWebhook')).body, { ok: true, result: true, description: 'Webhook is already deleted' });
  });
});

for (const { kind, skip } of await databaseKinds()) {
  describe(`bots receiving updates by webhook (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let chat: ChatApi;
    before(async () => {
      server = await startBotServer({ db: kind, env: { GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
      chat = new ChatApi(server.botUrl, await signedInPerson(server, 'frank'));
    });
    after(() => server.close());

    it('grammY replies through its webhook handler; the secret header is checked', async () => {
      const token = await botViaBotFather(chat, 'Hook', 'hook_grammy_bot');
      const bot = new Bot(token, { client: { apiRoot: server.botUrl } });
      bot.on('message:text', (ctx) => ctx.reply(`webhook saw: ${ctx.message.text}`));
      const receiver = await listen(webhookCallback(bot, 'http', { secretToken: 'sesame_42' }));
      try {
        const set = await bot.api.setWebhook(`${receiver.url}/hook`, { secret_token: 'sesame_42', max_connections: 5 });
        assert.equal(set, true);
        const conflict = await botApi(server.botUrl, token, 'getUpdates');
        assert.equal(conflict.status, 409);
        assert.equal(conflict.body.description, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");

        const mine = await chat.send('hook_grammy_bot', 'hello hook');
        const [reply] = await chat.replies('hook_grammy_bot', mine.message_id);
        assert.equal(reply!.text, 'webhook saw: hello hook');
        // The bot answers before it acknowledges the update, so the count may lag the reply a moment.
        let info = await bot.api.getWebhookInfo();
        for (let i = 0; i < 100 && info.pending_update_count > 0; i++) {
          await new Promise((r) => setTimeout(r, 20));
          info = await bot.api.getWebhookInfo();
        }
        assert.equal(info.url, `${receiver.url}/hook`);
        assert.equal(info.pending_update_count, 0);
        assert.equal(info.max_connections, 5);
        assert.equal(info.has_custom_certificate, false);
      } finally {
        await bot.api.deleteWebhook();
        await receiver.close();
      }
    });

    it('telegraf answers in the webhook reply body, which Gatehouse executes', async () => {
      const token = await botViaBotFather(chat, 'Reply', 'reply_telegraf_bot');
      const bot = new Telegraf(token, { telegram: { apiRoot: server.botUrl, webhookReply: true } });
      bot.on(message('text'), (ctx) => ctx.reply(`via reply body: ${ctx.message.text}`));
      const receiver = await listen(bot.webhookCallback('/tg', { secretToken: 'open_sesame' }));
      try {
        await bot.telegram.setWebhook(`${receiver.url}/tg`, { secret_token: 'open_sesame' });
        const mine = await chat.send('reply_telegraf_bot', 'abc');
        const [reply] = await chat.replies('reply_telegraf_bot', mine.message_id);
        assert.equal(reply!.text, 'via reply body: abc');
      } finally {
        await bot.telegram.deleteWebhook();
        await receiver.close();
      }
    });

    it('delivers in order per chat, retrying with backoff and recording the error', async () => {
      const token = await botViaBotFather(chat, 'Order', 'order_raw_bot');
      const seen: string[] = [];
      let failures = 1;
      const receiver = await listen(async (req, res) => {
        const update = JSON.parse(await bodyOf(req)) as { message: { text: string } };
        if (req.headers['x-telegram-bot-api-secret-token'] !== undefined) throw new Error('no secret was set');
        if (failures > 0) {
          failures--;
          res.writeHead(500, { 'retry-after': '0' }).end('down');
          return;
        }
        seen.push(update.message.text);
        res.writeHead(200).end();
      });
      try {
        const set = await botApi(server.botUrl, token, 'setWebhook', { url: `${receiver.url}/order` });
        assert.deepEqual(set.body, { ok: true, result: true, description: 'Webhook was set' });
        for (const t of ['one', 'two', 'three']) await chat.send('order_raw_bot', t);
        for (let i = 0; i < 100 && seen.length < 3; i++) await new Promise((r) => setTimeout(r, 50));
        assert.deepEqual(seen, ['one', 'two', 'three']);
        const info = (await botApi(server.botUrl, token, 'getWebhookInfo')).body.result as Record<string, unknown>;
        assert.equal(info.last_error_message, 'Wrong response from the webhook: 500');
        assert.ok(Number(info.last_error_date) > 0);
        assert.equal(info.pending_update_count, 0);
      } finally {
        await botApi(server.botUrl, token, 'deleteWebhook');
        await receiver.close();
      }
    });
  });
}
