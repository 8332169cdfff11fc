import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Gatehouse } from '../../gatehouse.js';
import { sendPage } from '../common.js';
import { notFoundPage } from '../pages/home.js';
import { stylesheet } from '../pages/style.js';

/**
 * A person who mistypes an address on the bot port ({bot_api_url}) gets a
 * page leading to the chat page, not the Bot API's JSON. Only a browser's
 * navigation qualifies: GET or HEAD asking for text/html, outside the Bot
 * API's own paths (/bot<token>/…, /file/bot<token>/…) and the chat client
 * API's (/client/…), so their clients keep their JSON whatever they send.
 */
export function wantsPage(req: FastifyRequest): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (/^\/((file\/)?bot|client(\/|$|\?))/i.test(req.url)) return false;
  return (req.headers.accept ?? '').includes('text/html');
}

/** Registers the page's stylesheet; returns the page's sender. */
export function browserNotFound(app: FastifyInstance, gh: Gatehouse): (reply: FastifyReply) => FastifyReply {
  app.get('/assets/gatehouse.css', async (_req, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(stylesheet));
  const page = notFoundPage({ home: '/', homeLabel: 'Open the chat page', extra: { href: `${gh.config.authUrl.replace(/\/+$/, '')}/`, label: 'Gatehouse home' } });
  return (reply) => sendPage(reply, 404, page);
}
