import type { FastifyInstance } from 'fastify';
import { LINK_PATH, linkChat, readLinkToken } from '../../core/notify/link.js';
import { single, type Params } from '../../core/params.js';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendErrorPage, sendPage } from '../common.js';
import { html, layout } from '../pages/html.js';
import { currentSession } from './session-cookie.js';
import { formBody, paramsOf } from '../input.js';

const PURPOSE = 'notify-link';

const tokenOf = (p: Params): string | undefined => {
  try {
    const t = single(p, 'token');
    return t && t.length <= 4096 ? t : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Linking a chat to one's account (docs/events.md, Chat notifications): the notification bot answers
 * `/start` with a link here; the signed-in person confirms, and their own
 * security events go to that chat from then on.
 */
export async function notifyLinkRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };
  const invalid = (reply: Parameters<typeof sendErrorPage>[0]) =>
    sendErrorPage(reply, 400, 'This link is not valid', 'the link has expired or was not made by this server; send /start to the bot again');

  app.get(LINK_PATH, { config: page, schema: { querystring: paramsOf('token') } }, async (req, reply) => {
    const token = tokenOf(req.query as Params);
    if (!token || !(await readLinkToken(gh.keys, gh.oauth.issuer, token, gh.clock.now()))) return invalid(reply);
    const current = await currentSession(gh, req);
    if (!current) return reply.redirect(`/login?return_to=${encodeURIComponent(req.url)}`, 302);
    return sendPage(reply, 200, layout('Chat notifications', html`<h1>Send notifications to this chat?</h1>
<p class="lede">Signed in as <strong>${current.user.username}</strong>.</p>
<p>The chat that asked will get a message when someone signs in to your account, when a sign-in is replayed, or when you grant an application access. Send /stop in the chat to end it.</p>
<form method="post" action="${LINK_PATH}">
<input type="hidden" name="csrf_token" value="${csrfToken(current.id, PURPOSE)}">
<input type="hidden" name="token" value="${token}">
<button type="submit" class="primary">Send them to this chat</button>
</form>`));
  });

  app.post(LINK_PATH, { config: page, schema: { body: formBody(paramsOf('csrf_token', 'token')) } }, async (req, reply) => {
    if (!isForm(req)) return sendErrorPage(reply, 400, 'Bad request', 'the confirmation must be sent as a form');
    const body = (req.body ?? {}) as Params;
    const current = await currentSession(gh, req);
    if (!current) return sendErrorPage(reply, 401, 'Signed out', 'sign in and open the link from the chat again');
    if (!csrfValid(current.id, PURPOSE, body.csrf_token)) return sendErrorPage(reply, 403, 'Request expired', 'reload the page and try again');
    const token = tokenOf(body);
    if (!token) return invalid(reply);
    const r = await linkChat({ events: gh.storage.events, keys: gh.keys, limits: gh.storage.rateLimits, clock: gh.clock, issuer: gh.oauth.issuer }, token, current.user.id);
    if (!r.ok) return r.reason === 'used' ? sendErrorPage(reply, 400, 'Link already used', 'each link works once; send /start to the bot again') : invalid(reply);
    return sendPage(reply, 200, layout('Chat notifications', html`<h1>Done</h1>
<p class="lede">Your security notifications now go to that chat.</p>`));
  });
}
