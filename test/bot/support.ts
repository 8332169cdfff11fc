import assert from 'node:assert/strict';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Message } from '@grammyjs/types';
import { startServer, type TestServer } from '../helpers/server.js';
import type { DbKind } from '../helpers/db.js';
import type { Person } from '../helpers/people.js';

/** A Gatehouse with the chat-bot interface, and the people who talk to bots through it. */
export interface BotTestServer extends TestServer {
  botUrl: string;
}

export async function startBotServer(opts: { db?: DbKind; env?: Record<string, string> } = {}): Promise<BotTestServer> {
  const server = await startServer({ db: opts.db ?? 'sqlite', env: { GATEHOUSE_ROLES: 'auth,bot', ...opts.env } });
  assert.ok(server.bot, 'the bot role runs');
  return Object.assign(server, { botUrl: server.bot.url });
}

// People who talk to bots (a bearer token of scope `chat`) come from the shared helper.
export { signedInPerson, type Person } from '../helpers/people.js';

/** The chat client API (docs/chat-bot.md, "People's side"). */
export class ChatApi {
  constructor(private readonly base: string, private readonly person: Person) {}

  private headers(json = false): Record<string, string> {
    return { authorization: `Bearer ${this.person.token}`, ...(json ? { 'content-type': 'application/json' } : {}) };
  }

  async send(bot: string, text: string): Promise<Message.TextMessage> {
    const res = await fetch(`${this.base}/client/chats/${bot}/messages`, { method: 'POST', headers: this.headers(true), body: JSON.stringify({ text }) });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { message: Message.TextMessage }).message;
  }

  async messages(bot: string, after = 0, timeout = 0): Promise<Message.TextMessage[]> {
    const res = await fetch(`${this.base}/client/chats/${bot}/messages?after=${after}&timeout=${timeout}`, { headers: this.headers() });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { messages: Message.TextMessage[] }).messages;
  }

  /** Presses an inline button (`POST /client/chats/<bot>/callback`); the status and body as they came. */
  async press(bot: string, messageId: unknown, data: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${this.base}/client/chats/${bot}/callback`, {
      method: 'POST', headers: this.headers(true), body: JSON.stringify({ message_id: messageId, data }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** Waits (long polling) until the bot has written something after `after`; returns its messages. */
  async replies(bot: string, after: number, count = 1): Promise<Message.TextMessage[]> {
    const got: Message.TextMessage[] = [];
    let cursor = after;
    for (let i = 0; i < 20 && got.filter((m) => m.from?.is_bot).length < count; i++) {
      const batch = await this.messages(bot, cursor, 10);
      for (const m of batch) {
        got.push(m);
        cursor = Math.max(cursor, m.message_id);
      }
    }
    return got.filter((m) => m.from?.is_bot);
  }

  /** Sends one line to BotFather and returns its answer's text. */
  async ask(bot: string, text: string): Promise<string> {
    const mine = await this.send(bot, text);
    const answers = await this.replies(bot, mine.message_id);
    assert.ok(answers.length, `no answer to ${text}`);
    return answers.map((m) => m.text).join('\n');
  }
}

/** A Bot API call as a plain HTTP client would make it. */
export async function botApi(base: string, token: string, method: string, params: Record<string, unknown> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/bot${token}/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(params) });
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Creates a bot by talking to BotFather (docs/chat-bot.md); returns its token. */
export async function botViaBotFather(chat: ChatApi, name: string, username: string): Promise<string> {
  await chat.ask('BotFather', '/newbot');
  await chat.ask('BotFather', name);
  const done = await chat.ask('BotFather', username);
  const token = /(?<![0-9])(\d+:[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])/.exec(done)?.[1];
  assert.ok(token, done);
  return token;
}

/** A webhook receiver on loopback. */
export async function listen(handler: RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
