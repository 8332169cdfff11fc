import { createHmac } from 'node:crypto';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';

/** RFC 4648 base32 decoding, written here so the test does not trust the server's library. */
export function base32(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of text.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const bytes = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

/** RFC 6238 (HOTP of RFC 4226 §5.3 over T = floor(unix time / 30)) with HMAC-SHA-1 and 6 digits. */
export function totpCode(secret: string, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', base32(secret)).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0xf;
  const bin = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(bin).padStart(6, '0');
}

export const stepNow = () => Math.floor(Date.now() / 1000 / 30);

/** The fields of the form posting to `action` on a page. */
export function formFor(html: string, action: string): Record<string, string> {
  const i = html.indexOf(`action="${action}"`);
  assert.ok(i >= 0, `no form ${action} on page:\n${html.slice(0, 2000)}`);
  const start = html.lastIndexOf('<form', i);
  return parseForm(html.slice(start)).fields;
}

/** Turns the authenticator app on for a signed-in agent; its secret and the recovery codes shown once. */
export async function enrolTotp(agent: Agent): Promise<{ secret: string; recoveryCodes: string[]; usedStep: number }> {
  const page = await (await agent.get('/account/security')).text();
  const started = await agent.post('/account/security/totp/start', formFor(page, '/account/security/totp/start'));
  assert.equal(started.status, 303);
  const setup = await (await agent.get('/account/security')).text();
  const secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(setup)?.[1];
  assert.ok(secret, setup);
  assert.match(setup, /otpauth:\/\/totp\//);
  assert.match(setup, /<svg [^>]*aria-label="QR code/);
  const usedStep = stepNow();
  const done = await agent.post('/account/security/totp/confirm', { ...formFor(setup, '/account/security/totp/confirm'), code: totpCode(secret, usedStep) });
  assert.equal(done.status, 200);
  const codes = [...(await done.text()).matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!);
  assert.equal(codes.length, 10);
  return { secret, recoveryCodes: codes, usedStep };
}

/** Password, then the second-step page: the agent holds the pending cookie and no session. */
export async function passwordStep(base: string, username: string, password: string): Promise<{ agent: Agent; page: string }> {
  const agent = new Agent(base);
  const res = await agent.login(username, password);
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/login/second-step');
  assert.equal(agent.cookie('gh_session'), undefined, 'no session before the second step');
  const page = await agent.get('/login/second-step');
  assert.equal(page.status, 200);
  return { agent, page: await page.text() };
}

type Keyboard = { reply_markup?: { inline_keyboard: { text: string; callback_data: string }[][] } };
/** The chat side the tests drive (test/bot/support.ts ChatApi). */
interface ChatSide {
  messages(bot: string, after?: number, timeout?: number): Promise<{ message_id: number; text: string }[]>;
  replies(bot: string, after: number, count?: number): Promise<{ message_id: number; text: string }[]>;
  press(bot: string, messageId: unknown, data: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
}

/**
 * Asks to turn approval in chat on (the security page's form) and returns the
 * confirmation the linked chat got, with its buttons' data; it is on only
 * once "Turn on" is tapped there (issue 24).
 */
export async function askChatApproval(browser: Agent, chat: ChatSide, bot: string): Promise<{ messageId: number; text: string; turnOn: string; cancel: string }> {
  const last = (await chat.messages(bot)).at(-1)?.message_id ?? 0;
  const page = await (await browser.get('/account/security')).text();
  const res = await browser.post('/account/security/chat-approval', { ...formFor(page, '/account/security/chat-approval'), enabled: 'on' });
  assert.equal(res.status, 303, await res.text());
  assert.equal(res.headers.get('location'), '/account/security?done=chat-asked');
  const asks = await chat.replies(bot, last, 1);
  const msg = asks.find((m) => /Turn on sign-in approval in chat/.test(m.text)) as ({ message_id: number; text: string } & Keyboard) | undefined;
  assert.ok(msg, asks.map((m) => m.text).join('\n'));
  const buttons = msg.reply_markup!.inline_keyboard.flat();
  assert.deepEqual(buttons.map((b) => b.text), ['Turn on', 'Cancel']);
  return { messageId: msg.message_id, text: msg.text, turnOn: buttons[0]!.callback_data, cancel: buttons[1]!.callback_data };
}

/** Turns approval in chat on: the form, then "Turn on" tapped in the linked chat. */
export async function turnOnChatApproval(browser: Agent, chat: ChatSide, bot: string): Promise<void> {
  const ask = await askChatApproval(browser, chat, bot);
  const pressed = await chat.press(bot, ask.messageId, ask.turnOn);
  assert.equal(pressed.status, 200);
  assert.match(String((pressed.body.result as { text?: string }).text), /is on/);
  assert.match(await (await browser.get('/account/security')).text(), /Approval in chat: <strong>on/);
}
