import { z } from 'zod';
import { QUERY_TOO_OLD, type CallbackQueries } from '../callbacks.js';
import { badRequest } from '../errors.js';
import { method } from '../method.js';
import { bool, int, refusing, str } from '../params.js';
import type { BotRecord, CallbackAnswer } from '../ports.js';

/** Bot API answerCallbackQuery: text 0–200 characters. */
export const MAX_ANSWER_TEXT = 200;

/**
 * An answer's url may only start this bot (t.me/<bot>?start=…); game URLs
 * need games, which are not served. Anything else: URL_INVALID, as Telegram.
 */
function startLink(bot: BotRecord, raw: string): string {
  let u: URL;
  const link = raw.trim();
  try {
    // The Bot API's own example is scheme-less: t.me/your_bot?start=XXXX.
    u = new URL(/^[a-z][a-z0-9+.-]*:/i.test(link) ? link : `https://${link}`);
  } catch {
    throw badRequest('URL_INVALID');
  }
  const name = bot.username.toLowerCase();
  const web = /^https?:$/.test(u.protocol) && ['t.me', 'telegram.me', 'telegram.dog'].includes(u.hostname.toLowerCase())
    && u.pathname.replace(/\/$/, '').toLowerCase() === `/${name}`;
  const tg = u.protocol === 'tg:' && u.hostname === 'resolve' && u.searchParams.get('domain')?.toLowerCase() === name;
  if (!web && !tg) throw badRequest('URL_INVALID');
  return u.href;
}

const params = z.object({
  callback_query_id: str('callback_query_id'),
  text: str('text'),
  show_alert: bool('show_alert'),
  url: str('url'),
  cache_time: int('cache_time'),
}).transform(refusing((p) => {
  if (!p.callback_query_id) throw badRequest(QUERY_TOO_OLD);
  if ((p.text ?? '').length > MAX_ANSWER_TEXT) throw badRequest('MESSAGE_TOO_LONG');
  return p;
}));

export const answerCallbackQuery = (d: { callbacks: CallbackQueries }) => method('answerCallbackQuery', {
  params,
  async run({ bot }, p) {
    const answer: CallbackAnswer = {};
    if (p.text) answer.text = p.text;
    if (p.show_alert) answer.show_alert = true;
    if (p.url) answer.url = startLink(bot, p.url);
    if (p.cache_time && p.cache_time > 0) answer.cache_time = p.cache_time;
    await d.callbacks.answer(bot, p.callback_query_id!, answer);
    return true as const;
  },
});
