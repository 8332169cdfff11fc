/**
 * Sign-in approval in chat (`approval` row of `npm run bench`): from the
 * person's press (POST /client/chats/<bot>/callback) to the waiting
 * second-step page's long poll answering `approved`, p50/p99. The Gatehouse
 * runs auth, bot and worker roles with GATEHOUSE_NOTIFY_BOT_TOKEN set
 * (bench/gatehouse.ts `notifyBot`): the approval message goes out through the
 * outbox and the notification worker, as in production.
 */
import { Agent, parseForm } from '../test/helpers/agent.js';
import { ChatApi } from '../test/bot/support.js';
import { enrolTotp, formFor, passwordStep } from '../test/mfa/support.js';
import { adminCall, basicAuth, chatToken, NOTIFY_BOT, type GatehouseUnderTest } from './gatehouse.js';
import { cpuMeter, type Figures, type LoadOptions } from './load.js';
import { latencyFigures, sleep } from './paced.js';
import type { Row } from './report.js';

type WithButtons = { message_id: number; text: string; reply_markup?: { inline_keyboard: { text: string; callback_data: string }[][] } };

/** A person with a linked chat, an authenticator app and chat approval on; what a sign-in needs. */
async function approver(gh: GatehouseUnderTest) {
  const username = 'bench-approver';
  const password = 'correct horse battery staple';
  await adminCall(gh, 'POST', '/users', { username, email: `${username}@example.test`, password }, 201);
  const app = await adminCall(gh, 'POST', '/clients', { client_name: 'bench chat app', token_endpoint_auth_method: 'client_secret_basic', grant_types: ['password'], scope: 'chat' }, 201);
  const chatApp = { id: app.client_id as string, secret: app.client_secret as string, basic: basicAuth(app.client_id as string, app.client_secret as string) };
  const chat = new ChatApi(gh.botUrl!, { username, token: await chatToken({ ...gh, chatApp }, { username, password }) });
  const [answer] = await chat.replies(NOTIFY_BOT, (await chat.send(NOTIFY_BOT, '/start')).message_id);
  const link = /https?:\/\/\S+\/notifications\/link\?token=\S+/.exec(answer?.text ?? '');
  if (!link) throw new Error(`approval: no link from the notification bot: ${answer?.text}`);
  const browser = new Agent(gh.url);
  await browser.login(username, password);
  const url = new URL(link[0]);
  const confirm = parseForm(await (await browser.get(`${url.pathname}${url.search}`)).text());
  await browser.post(confirm.action, confirm.fields);
  await enrolTotp(browser);
  const page = await (await browser.get('/account/security')).text();
  await browser.post('/account/security/chat-approval', { ...formFor(page, '/account/security/chat-approval'), enabled: 'on' });
  return { chat, username, password };
}

/**
 * Sign-ins one after another (each: password, the approval message read from
 * the chat, the page's long poll opened, then the press of the right number);
 * the warm-up's are thrown away. At least 30 measured whatever the duration,
 * so p99 is not one sample. CPU per sign-in includes the password's argon2.
 */
export async function approvalLatency(gh: GatehouseUnderTest, load: LoadOptions): Promise<Figures> {
  if (!gh.botUrl) throw new Error('approval: the bot role is not running');
  const { chat, username, password } = await approver(gh);
  let last = (await chat.messages(NOTIFY_BOT)).at(-1)?.message_id ?? 0;
  let failed = 0;
  const once = async (): Promise<number | undefined> => {
    const { agent, page } = await passwordStep(gh.url, username, password);
    const number = /id="approval-number">(\d+)</.exec(page)?.[1];
    let msg: WithButtons | undefined;
    // Other notifications (the new sign-in alert of the previous round) may come in between.
    for (let t = 0; t < 50 && !msg; t++) {
      const batch = (await chat.messages(NOTIFY_BOT, last, 1)) as unknown as WithButtons[];
      msg = batch.find((m) => /tap the number/.test(m.text));
      last = Math.max(last, ...batch.map((m) => m.message_id));
    }
    const data = msg?.reply_markup?.inline_keyboard[0]?.find((b) => b.text === number)?.callback_data;
    if (!msg || !number || !data) return undefined;
    const waiting = agent.get('/login/second-step/wait').then(async (r) => ({ state: ((await r.json()) as { state: string }).state, at: performance.now() }));
    // The long poll is registered before the press.
    await sleep(20);
    const pressed = performance.now();
    void chat.press(NOTIFY_BOT, msg.message_id, data);
    const woke = await waiting;
    return woke.state === 'approved' ? woke.at - pressed : undefined;
  };
  const until = performance.now() + load.warmup * 1000;
  while (performance.now() < until) await once();
  const latencies: number[] = [];
  const cpu = cpuMeter(gh.child.proc.pid);
  const start = performance.now();
  let sent = 0;
  while (performance.now() - start < load.duration * 1000 || latencies.length < 30) {
    sent++;
    const ms = await once().catch(() => undefined);
    if (ms === undefined) failed++;
    else latencies.push(ms);
    if (sent >= 300) break;
  }
  const seconds = (performance.now() - start) / 1000;
  return latencyFigures(latencies, { duration: seconds, sent, failed, lost: 0, cpuUs: cpu() });
}

/** The row's note (no target: the issue asks for the figure). */
export function approvalNotes(rows: Row[]): string[] {
  return rows.filter((r) => r.id === 'approval').map((r) =>
    `chat approval (${r.db}): press → waiting page continues p50 ${r.figures.p50.toFixed(1)} ms, p99 ${r.figures.p99.toFixed(1)} ms over ${(r.figures.total - r.figures.non2xx)} sign-ins`);
}
