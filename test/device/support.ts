import assert from 'node:assert/strict';
import type { Message } from '@grammyjs/types';
import { hashBotToken, newAccountId, newBotToken } from '../../src/core/bot/token.js';
import type { Clock } from '../../src/core/ports.js';
import { Agent, parseForm } from '../helpers/agent.js';
import type { DbKind } from '../helpers/db.js';
import type { Person } from '../helpers/people.js';
import { chatPagePerson } from '../helpers/chat-page-token.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ChatApi } from '../bot/support.js';

export const BOT = 'gatehouse_alerts_bot';
export const PASSWORD = 'correct horse battery staple';

/** A clock running with real time, that a test can move ahead (expiry) without freezing the poll interval. */
export class OffsetClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
}

export interface ChatServer extends TestServer {
  clock: OffsetClock;
}

/**
 * A Gatehouse whose notification bot (GATEHOUSE_NOTIFY_BOT_TOKEN) is one of
 * its own bots; its worker role sends the alerts and reads button presses.
 * Polling interval 1 s so openid-client's polls stay quick.
 */
export async function startChatServer(db: DbKind, env: Record<string, string> = {}): Promise<ChatServer> {
  const id = newAccountId();
  const token = newBotToken(id);
  const clock = new OffsetClock();
  const server = await startServer({ db, clock, env: { GATEHOUSE_NOTIFY_BOT_TOKEN: token, GATEHOUSE_POLL_INTERVAL: '1', GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true', ...env } });
  const ops = await server.createUser('ops');
  await server.gh.botStorage.bots.create({ id, username: BOT, name: 'Gatehouse alerts', ownerUserId: ops.id, tokenHash: hashBotToken(token), createdAt: Date.now() });
  return Object.assign(server, { clock });
}

export interface LinkedPerson {
  person: Person;
  chat: ChatApi;
  browser: Agent;
  user: { id: string; username: string; password: string };
}

/**
 * A person signed in in a browser, with their chat linked to the notification bot (/start and the
 * one-time link), talking through Gatehouse's own chat page: only its token sees the bot's prompts.
 */
export async function linkedPerson(server: TestServer, username: string): Promise<LinkedPerson> {
  const person = await chatPagePerson(server, username);
  const chat = new ChatApi(server.bot!.url, person);
  const [answer] = await chat.replies(BOT, (await chat.send(BOT, '/start')).message_id);
  const link = /https?:\/\/\S+\/notifications\/link\?token=\S+/.exec(answer!.text)?.[0];
  assert.ok(link, answer!.text);
  const browser = new Agent(server.url);
  assert.equal((await browser.login(username, PASSWORD)).status, 303);
  const target = new URL(link);
  const confirm = await browser.get(`${target.pathname}${target.search}`);
  assert.equal(confirm.status, 200);
  const form = parseForm(await confirm.text());
  assert.equal((await browser.post(form.action, form.fields)).status, 200);
  const user = (await server.gh.storage.users.findByUsername(username))!;
  return { person, chat, browser, user: { id: user.id, username, password: PASSWORD } };
}

type Button = { text: string; callback_data?: string };
export const buttonsOf = (m: Message.TextMessage) => ((m.reply_markup?.inline_keyboard ?? []).flat() as Button[]);

/** Waits for the bot's next message after `after` whose text matches `pattern`. */
export async function nextMessage(chat: ChatApi, after: number, pattern: RegExp): Promise<Message.TextMessage> {
  let cursor = after;
  for (let i = 0; i < 20; i++) {
    for (const m of await chat.messages(BOT, cursor, 5)) {
      cursor = Math.max(cursor, m.message_id);
      if (m.from?.is_bot && pattern.test(m.text ?? '')) return m;
    }
  }
  throw new Error(`no message matching ${pattern}`);
}

/** The latest message id in the chat (to wait for what comes after it). */
export async function lastId(chat: ChatApi): Promise<number> {
  return (await chat.messages(BOT)).at(-1)?.message_id ?? 0;
}

/** Presses the button labelled `label` on `m`; the callback answer's text. */
export async function press(chat: ChatApi, m: Message.TextMessage, label: string, data?: string): Promise<string | undefined> {
  const b = buttonsOf(m).find((x) => x.text === label);
  assert.ok(b?.callback_data, `no button ${label} on: ${m.text}`);
  const r = await chat.press(BOT, m.message_id, data ?? b.callback_data);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return (r.body.result as { text?: string }).text;
}

export async function postForm(url: string, fields: Record<string, string>, auth?: { id: string; secret?: string | undefined }): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (auth?.secret) headers.authorization = `Basic ${Buffer.from(`${auth.id}:${auth.secret}`).toString('base64')}`;
  else if (auth) fields = { ...fields, client_id: auth.id };
  const res = await fetch(url, { method: 'POST', headers, body: new URLSearchParams(fields) });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: res.status, body };
}
