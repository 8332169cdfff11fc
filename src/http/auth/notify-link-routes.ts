import type { FastifyInstance } from 'fastify';
import { LINK_PATH, linkChat, readLinkToken } from '../../core/notify/link.js';
import { single, type Params } from '../../core/params.js';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendErrorPage, sendPage } from '../common.js';
import { html, layout } from '../pages/html.js';
import { linkConfirmPage, NOT_YOURS } from '../pages/chat-link.js';
import { LinkTargets } from '../../core/notify/link-target.js';
import { currentSession } from './session-cookie.js';
import { formBody, paramsOf } from '../input.js';
import { recentAuthentication } from './reauth.js';

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
    const link = token ? await readLinkToken(gh.keys, gh.oauth.issuer, token, gh.clock.now()) : undefined;
    if (!token || !link) return invalid(reply);
    const current = await currentSession(gh, req);
    if (!current) return reply.redirect(`/login?return_to=${encodeURIComponent(req.url)}`, 302);
    // Issue 24, finding 7: the page names the chat and its powers; on our own chat service only its person may confirm.
    const target = await gh.linkTargets.describe(link);
    if (!LinkTargets.mayConfirm(target, current.user.id)) return sendErrorPage(reply, 403, NOT_YOURS.title, NOT_YOURS.text(target));
    return sendPage(reply, 200, linkConfirmPage({ username: current.user.username, target, action: LINK_PATH, csrf: csrfToken(current.id, PURPOSE), token }));
  });

  app.post(LINK_PATH, { config: page, schema: { body: formBody(paramsOf('csrf_token', 'token', 'password', 'code')) } }, async (req, reply) => {
    if (!isForm(req)) return sendErrorPage(reply, 400, 'Bad request', 'the confirmation must be sent as a form');
    const body = (req.body ?? {}) as Params;
    const current = await currentSession(gh, req);
    if (!current) return sendErrorPage(reply, 401, 'Signed out', 'sign in and open the link from the chat again');
    if (!csrfValid(current.id, PURPOSE, body.csrf_token)) return sendErrorPage(reply, 403, 'Request expired', 'reload the page and try again');
    // Sudo mode: a linked chat can approve sign-ins (src/http/auth/reauth.ts).
    if (!(await recentAuthentication(gh, req, reply, current, body, { action: LINK_PATH, page: '/account/security' }))) return reply;
    const token = tokenOf(body);
    if (!token) return invalid(reply);
    const r = await linkChat({
      events: gh.storage.events, keys: gh.keys, limits: gh.storage.rateLimits, clock: gh.clock, issuer: gh.oauth.issuer, mayConfirm: (l, u) => gh.linkTargets.mayConfirm(l, u),
    }, token, current.user.id);
    if (!r.ok && r.reason === 'not_yours') return sendErrorPage(reply, 403, NOT_YOURS.title, NOT_YOURS.text());
    if (!r.ok) return r.reason === 'used' ? sendErrorPage(reply, 400, 'Link already used', 'each link works once; send /start to the bot again') : invalid(reply);
    return sendPage(reply, 200, layout('Chat notifications', html`<h1>Done</h1>
<p class="lede">Your security notifications now go to that chat.</p>`));
  });
}
