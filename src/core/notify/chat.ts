import { rfc3339, type NotifyEvent } from './events.js';
import type { HttpAnswer, HttpPost } from './transport.js';

/** A Bot API to send notifications through: Gatehouse's own ({bot_api_url}) or any Telegram-compatible one. */
export interface ChatChannelConfig {
  apiUrl: string;
  token: string;
}

const str = (v: unknown) => (typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v));
const list = (v: unknown) => (Array.isArray(v) ? v.join(' ') : str(v));

/** Plain text a person reads in a chat (no markup, so nothing in the data can inject formatting). */
export function chatText(e: NotifyEvent): string {
  const d = e.data;
  const at = rfc3339(e.createdAt).replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  switch (e.type) {
    case 'user.login.succeeded':
      return `New sign-in to your account ${str(d.username)} from ${str(d.ip)} at ${at}.\nIf this was not you, change your password now.`;
    case 'user.login.failed':
      return `Failed sign-in for ${str(d.username)} from ${str(d.ip)} at ${at}.`;
    case 'user.locked':
      if (d.locked_by === 'not_me') return `Your account ${str(d.username)} is locked: you answered "Not me" to a sign-in from ${str(d.ip)} at ${at}. Change your password; an administrator can unlock the account.`;
      return `Sign-in to ${str(d.username)} is locked for a while after too many failed attempts (from ${str(d.ip)}) at ${at}.`;
    case 'consent.granted':
      return `You granted ${str(d.client_name)} access to your account (${list(d.scope)}) at ${at}.`;
    case 'consent.denied':
      return `${str(d.client_name)} was refused access (${list(d.scope)}) at ${at}.`;
    case 'device.approved':
      return `You let a device sign in to your account as ${str(d.client_name)} (${list(d.scope)}) at ${at}.`;
    case 'ciba.approved':
      return `You allowed ${str(d.client_name)} (${list(d.scope)})${d.binding_message ? ` for "${str(d.binding_message)}"` : ''} at ${at}.`;
    case 'refresh_token.reuse_detected':
      return `Warning: a sign-in of client ${str(d.client_id)} was replayed (a used refresh token came back). Gatehouse revoked that sign-in to protect your account.`;
    case 'authorization_code.reuse_detected':
      return `Warning: a sign-in code for client ${str(d.client_id)} was used twice. Gatehouse revoked what it issued.`;
    case 'webhook.disabled':
      return `Notification endpoint ${str(d.endpoint_id)} (${str(d.url ?? d.chat_id)}) was disabled: ${str(d.reason)}.`;
    default: {
      const body = JSON.stringify(d);
      return `${e.type} at ${at}\n${body.length > 3000 ? `${body.slice(0, 3000)}…` : body}`;
    }
  }
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
