import { Agent } from 'node:http';
import { deflateSync } from 'node:zlib';
import { chatToken, createBot, type GatehouseUnderTest } from './gatehouse.js';
import { cpuMeter, type Figures, type Load, type LoadOptions } from './load.js';
import { latencyFigures, paced, post, sleep } from './paced.js';

/**
 * The Bot API's interactive rows: the callback round trip (a person's press
 * → the bot's getUpdates → answerCallbackQuery → the press's answer) and
 * sendPhoto with a 100 KB image.
 */

const JSON_HEADERS = { 'content-type': 'application/json' };


type Update = { update_id: number; message?: { chat: { id: number } }; callback_query?: { id: string } };

/** A bot, `people` people who wrote to it, and in each chat a message of the bot's with a button. */
async function chatsWithButtons(gh: GatehouseUnderTest, people: number) {
  const token = await createBot(gh, gh.user.username, `press_${Date.now().toString(36)}_bot`);
  const api = `${gh.botUrl}/bot${token}`;
  const agent = new Agent({ keepAlive: true });
  const username = (JSON.parse((await post(agent, `${api}/getMe`, JSON_HEADERS, '{}')).body) as { result: { username: string } }).result.username;
  const tokens = await Promise.all(gh.loginUsers.slice(0, people).map((a) => chatToken(gh, a)));
  for (const t of tokens) await post(agent, `${gh.botUrl}/client/chats/${username}/messages`, { authorization: `Bearer ${t}`, ...JSON_HEADERS }, '{"text":"/start"}');
  const updates = (JSON.parse((await post(agent, `${api}/getUpdates`, JSON_HEADERS, '{}')).body) as { result: Update[] }).result;
  const chats = updates.map((u) => u.message!.chat.id);
  await post(agent, `${api}/getUpdates`, JSON_HEADERS, JSON.stringify({ offset: updates.at(-1)!.update_id + 1, timeout: 0 }));
  const messageIds: number[] = [];
  for (const chat_id of chats) {
    const sent = await post(agent, `${api}/sendMessage`, JSON_HEADERS, JSON.stringify({
      chat_id, text: 'Approve the deploy?', reply_markup: { inline_keyboard: [[{ text: 'Approve', callback_data: 'approve' }]] },
    }));
    messageIds.push((JSON.parse(sent.body) as { result: { message_id: number } }).result.message_id);
  }
  agent.destroy();
  return { api, username, tokens, messageIds };
}

/**
 * Callback round trip at `rate` presses/s from 8 people: each press is
 * `POST /client/chats/<bot>/callback`; the bot long-polls getUpdates and
 * answers every callback_query with answerCallbackQuery; latency runs from
 * sending the press to reading its answer (req/s: presses answered).
 */
export async function callbackRoundTrip(gh: GatehouseUnderTest, load: LoadOptions, rate: number): Promise<Figures> {
  if (!gh.botUrl) throw new Error('callback: the bot role is not running');
  const { api, username, tokens, messageIds } = await chatsWithButtons(gh, 8);
  const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
  const botAgent = new Agent({ keepAlive: true, maxSockets: 64 });
  let latencies: number[] = [];
  let failed = 0;
  let pending = 0;
  let polling = true;
  let offset = 0;

  const poll = async () => {
    while (polling) {
      const r = await post(botAgent, `${api}/getUpdates`, JSON_HEADERS, JSON.stringify({ offset, timeout: 30, limit: 100, allowed_updates: ['callback_query'] }));
      for (const u of (JSON.parse(r.body) as { result?: Update[] }).result ?? []) {
        offset = Math.max(offset, u.update_id + 1);
        if (u.callback_query) {
          void post(botAgent, `${api}/answerCallbackQuery`, JSON_HEADERS, JSON.stringify({ callback_query_id: u.callback_query.id, text: 'Approved' }))
            .then((a) => { if (a.status !== 200) failed++; }, () => failed++);
        }
      }
    }
  };
  const poller = poll().catch((e: Error) => {
    failed++;
    console.error(`bench: callback: getUpdates failed: ${e.message}`);
  });

  let seq = 0;
  const press = () => {
    const i = seq++ % tokens.length;
    const start = performance.now();
    pending++;
    post(agent, `${gh.botUrl}/client/chats/${username}/callback`, { authorization: `Bearer ${tokens[i]}`, ...JSON_HEADERS }, JSON.stringify({ message_id: messageIds[i], data: 'approve' }))
      .then((r) => {
        if (r.status === 200 && r.body.includes('Approved')) latencies.push(performance.now() - start);
        else failed++;
      }, () => failed++)
      .finally(() => pending--);
  };
  const produce = (seconds: number) => paced(rate, seconds, press);

  await produce(Math.max(1, load.warmup));
  for (let i = 0; i < 160 && pending; i++) await sleep(100);
  latencies = [];
  failed = 0;
  const cpu = cpuMeter(gh.child.proc.pid);
  const sent = await produce(load.duration);
  const cpuUs = cpu();
  // Presses still waiting are answered or time out within 15 s: none may spill into the next row.
  for (let i = 0; i < 160 && pending; i++) await sleep(100);
  const unanswered = pending;
  polling = false;
  // The poll in flight ends with the next update, or at its timeout; one more press ends it now.
  press();
  await Promise.race([poller, sleep(3000)]);
  agent.destroy();
  botAgent.destroy();
  return latencyFigures(latencies, { duration: load.duration, sent, failed, lost: unanswered, cpuUs });
}

/** A PNG of about `bytes` bytes (a 320×240 picture and a comment chunk): what sendPhoto reads the size of. */
function pngOf(bytes: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    // The CRC is not checked by Gatehouse (it reads only the header); zeros keep this short.
    return Buffer.concat([len, Buffer.from(type, 'latin1'), data, Buffer.alloc(4)]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(320, 0);
  ihdr.writeUInt32BE(240, 4);
  ihdr.writeUInt8(8, 8);
  ihdr.writeUInt8(2, 9);
  const idat = deflateSync(Buffer.alloc(961 * 240));
  const head = Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', idat)]);
  const pad = Math.max(0, bytes - head.length - 12 - 12);
  return Buffer.concat([head, chunk('tEXt', Buffer.alloc(pad, 0x61)), chunk('IEND', Buffer.alloc(0))]);
}

/** sendPhoto as multipart/form-data with a 100 KB PNG, each request a new upload into one chat. */
export async function sendPhotoLoad(gh: GatehouseUnderTest, bot: { token: string; chatId: number }): Promise<Load> {
  const boundary = 'gatehousebench0123456789';
  const photo = pngOf(100 * 1024);
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="chat_id"\r\n\r\n${bot.chatId}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="photo"; filename="chart.png"\r\nContent-Type: image/png\r\n\r\n`),
    photo,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { url: `${gh.botUrl}/bot${bot.token}/sendPhoto`, method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body };
}
