import type { FastifyInstance } from 'fastify';
import { LINK_CODE_TTL_MS } from '../../core/notify/link-code.js';
import type { Gatehouse } from '../../gatehouse.js';
import { sendPage } from '../common.js';
import { formBody, paramsOf } from '../input.js';
import { CHAT_LINK_PATH, chatLinkCodePage } from '../pages/chat-link.js';
import { recentAuthentication } from './reauth.js';
import { signedInForm } from './signed-in-form.js';

/**
 * Linking a chat, started signed in (issue 24, finding 7): the form on
 * /account/security asks for a one-time code; the page shows it once, with a
 * link that opens the notification bot's chat with `/start <code>` to send.
 */
export async function chatLinkRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  app.post(CHAT_LINK_PATH, { config: { kind: 'page' as const }, schema: { body: formBody(paramsOf('csrf_token', 'password', 'code')) } }, async (req, reply) => {
    // The CSRF token of /account/security (src/http/auth/security-routes.ts).
    const ok = await signedInForm(gh, req, reply, { path: '/account/security', purpose: 'security', name: 'security page' });
    if (!ok) return reply;
    // Sudo mode (issue 24, finding 8): a linked chat approves sign-ins, so a session cookie alone cannot make one.
    if (!(await recentAuthentication(gh, req, reply, ok.current, ok.body, { action: CHAT_LINK_PATH, page: '/account/security' }))) return reply;
    const { code } = await gh.chatLinkCodes.issue(ok.current.user.id);
    const { url, bot } = await gh.chatLinkCodes.chatLink(code);
    reply.header('cache-control', 'no-store');
    return sendPage(reply, 200, chatLinkCodePage({ username: ok.current.user.username, code, minutes: LINK_CODE_TTL_MS / 60_000, url, bot }));
  });
}
