import { rfc3339, type NotifyEvent } from './events.js';
import { sentenceFor } from './sentences.js';
import type { HttpAnswer, HttpPost } from './transport.js';

/** A Bot API to send notifications through: Gatehouse's own ({bot_api_url}) or any Telegram-compatible one. */
export interface ChatChannelConfig {
  apiUrl: string;
  token: string;
}

/**
 * Plain text a person reads in a chat (no markup, so nothing in the data can
 * inject formatting): the event's sentence (src/core/notify/sentences.ts).
 * `ctx` adds what the event does not carry: the app's name, the buttons sent with it.
 */
export function chatText(e: NotifyEvent, ctx: { clientName?: string | undefined; buttons?: string[] } = {}): string {
  const at = rfc3339(e.createdAt).replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');
  const said = sentenceFor(e.type, e.data, { at, clientName: ctx.clientName, buttons: ctx.buttons ?? [] });
  if (said !== undefined) return said;
  // An operator's chat subscribed to an event nobody wrote a sentence for (none is personal: the test sees to it).
  const fields = Object.entries(e.data).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('\n');
  return `${e.type} (${at})\n${fields.length > 3000 ? `${fields.slice(0, 3000)}…` : fields}`;
}

/** `buttons`: inline keyboard rows of callback buttons (src/core/notify/one-tap.ts). */
export function sendMessageRequest(cfg: ChatChannelConfig, chatId: string, text: string, timeoutMs: number, buttons?: { text: string; data: string }[][]): HttpPost {
  const markup = buttons?.length ? { reply_markup: { inline_keyboard: buttons.map((r) => r.map((b) => ({ text: b.text, callback_data: b.data }))) } } : {};
  return {
    url: `${cfg.apiUrl.replace(/\/+$/, '')}/bot${cfg.token}/sendMessage`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chat_id: /^-?\d+$/.test(chatId) ? Number(chatId) : chatId, text, ...markup }),
    timeoutMs,
  };
}

/**
 * A Bot API answer: `{ok:true}` delivered; 429 carries `parameters.retry_after`;
 * 403 (the person blocked the bot) or "chat not found" will never succeed.
 */
export function readBotAnswer(a: HttpAnswer): { ok: boolean; retryAfterSeconds?: number; unreachable: boolean } {
  let body: { ok?: boolean; error_code?: number; description?: string; parameters?: { retry_after?: number } } = {};
  try {
    body = JSON.parse(a.excerpt) as typeof body;
  } catch {
    // Not a Bot API answer (a proxy's error page, a cut excerpt): the HTTP status decides.
  }
  if (a.status !== null && a.status >= 200 && a.status < 300 && body.ok !== false) return { ok: true, unreachable: false };
  const code = body.error_code ?? a.status;
  const unreachable = code === 403 || (code === 400 && /chat not found|user is deactivated/i.test(body.description ?? ''));
  return { ok: false, unreachable, ...(body.parameters?.retry_after !== undefined ? { retryAfterSeconds: body.parameters.retry_after } : {}) };
}
