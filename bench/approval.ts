/**
 * Sign-in approval in chat: from the person's press (POST /client/chats/<bot>/callback)
 * to the waiting second-step page's long poll answering `approved`, p50/p99.
 * One Gatehouse in this process (auth, bot and the notification worker), SQLite or PostgreSQL:
 *
 *   node --import tsx bench/approval.ts [--db sqlite|postgres] [--runs 40]
 *
 * Not a row of `npm run bench` yet (it needs the notification bot's token before start).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createUser } from '../src/core/admin.js';
import { createBot } from '../src/core/bot/manage.js';
import { systemClock } from '../src/core/ports.js';
import { generateSecretKey } from '../src/core/secret-box.js';
import { argon2Hasher } from '../src/infra/argon2.js';
import { startNotifyWorker } from '../src/infra/notify-worker.js';
import { openStorage } from '../src/store/index.js';
import { Agent, parseForm } from '../test/helpers/agent.js';
import { dropDatabase, freshDatabaseUrl } from '../test/helpers/db.js';
import { signedInPerson } from '../test/helpers/people.js';
import { startServer } from '../test/helpers/server.js';
import { ChatApi } from '../test/bot/support.js';
import { enrolTotp, formFor, passwordStep } from '../test/mfa/support.js';

const { values } = parseArgs({ options: { db: { type: 'string', default: 'sqlite' }, runs: { type: 'string', default: '40' } } });
const BOT = 'gatehouse_notify_bot';
const dir = mkdtempSync(join(tmpdir(), 'gh-approval-'));
const databaseUrl = values.db === 'postgres' ? freshDatabaseUrl('postgres') : `sqlite:${join(dir, 'g.db')}`;
const secretKey = generateSecretKey().toString('base64');
const storage = await openStorage(databaseUrl, { secretKey });
const ops = await createUser(storage, argon2Hasher(), systemClock, { username: 'ops', email: 'ops@example.test', password: 'operator password 1' });
const { token } = await createBot(storage.bot, systemClock, { ownerUserId: ops.id, username: BOT, name: 'Notifications' });
await storage.close();
const server = await startServer({ env: { GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_SECRET_KEY: secretKey, GATEHOUSE_ROLES: 'auth,bot', GATEHOUSE_NOTIFY_BOT_TOKEN: token,
  // As in bench/gatehouse.ts: flood control would space one chat's messages out (Telegram's limits).
  GATEHOUSE_BOT_FLOOD_CHAT_RATE: '0', GATEHOUSE_BOT_FLOOD_GLOBAL_RATE: '0' } });
const notify = startNotifyWorker(server.gh, server.logger);
try {
  const chat = new ChatApi(server.bot!.url, await signedInPerson(server, 'alice'));
  const [answer] = await chat.replies(BOT, (await chat.send(BOT, '/start')).message_id);
  const link = new URL(/https?:\/\/\S+\/notifications\/link\?token=\S+/.exec(answer!.text)![0]);
  const browser = new Agent(server.url);
  const password = 'correct horse battery staple';
  await browser.login('alice', password);
  const confirm = parseForm(await (await browser.get(`${link.pathname}${link.search}`)).text());
  await browser.post(confirm.action, confirm.fields);
  await enrolTotp(browser);
  const page = await (await browser.get('/account/security')).text();
  await browser.post('/account/security/chat-approval', { ...formFor(page, '/account/security/chat-approval'), enabled: 'on' });

  const ms: number[] = [];
  for (let i = 0; i < Number(values.runs); i++) {
    const last = (await chat.messages(BOT)).at(-1)?.message_id ?? 0;
    const { agent, page: step } = await passwordStep(server.url, 'alice', password);
    const number = /id="approval-number">(\d+)</.exec(step)![1]!;
    type WithButtons = { message_id: number; text: string; reply_markup: { inline_keyboard: { text: string; callback_data: string }[][] } };
    let msg: WithButtons | undefined;
    // Other notifications (sent through the outbox) may arrive in between.
    for (let t = 0; t < 50 && !msg; t++) msg = ((await chat.messages(BOT, last, 1)) as unknown as WithButtons[]).find((m) => /tap the number/.test(m.text));
    if (!msg) throw new Error('no approval message');
    const data = msg.reply_markup.inline_keyboard[0]!.find((b) => b.text === number)!.callback_data;
    const waiting = agent.get('/login/second-step/wait').then(async (r) => ({ state: ((await r.json()) as { state: string }).state, at: performance.now() }));
    await new Promise((r) => setTimeout(r, 20));
    const pressed = performance.now();
    void chat.press(BOT, msg.message_id, data);
    const woke = await waiting;
    if (woke.state !== 'approved') throw new Error(`state ${woke.state}`);
    ms.push(woke.at - pressed);
  }
  ms.sort((a, b) => a - b);
  const q = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!.toFixed(1);
  console.log(`chat press → waiting page continues (${values.db}, ${ms.length} sign-ins): p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${ms.at(-1)!.toFixed(1)} ms`);
} finally {
  await notify.stop();
  await server.close();
  await dropDatabase(databaseUrl);
  rmSync(dir, { recursive: true, force: true });
}
