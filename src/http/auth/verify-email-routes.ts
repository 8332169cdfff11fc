import type { FastifyInstance } from 'fastify';
import { followEmailLink, VERIFY_EMAIL_PATH } from '../../core/account/verify-email.js';
import { single, type Params } from '../../core/params.js';
import type { Gatehouse } from '../../gatehouse.js';
import { sendPage } from '../common.js';
import { paramsOf } from '../input.js';
import { emailLinkInvalidPage, emailVerifiedPage } from '../pages/verify-email.js';
import { currentSession } from './session-cookie.js';

/**
 * GET /account/verify-email?token=… (issue 26 item 3): the link of the
 * 'verify-email' message. It works in any browser, signed in or not: the
 * token is the proof. Used once (src/core/account/verify-email.ts); an
 * unknown, used, replaced or expired link answers 400 with a page saying
 * so, and changes nothing.
 */
export async function verifyEmailRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  app.get(VERIFY_EMAIL_PATH, { config: { kind: 'page' as const }, schema: { querystring: paramsOf('token') } }, async (req, reply) => {
    let token = '';
    try {
      token = single(req.query as Params, 'token') ?? '';
    } catch {
      // A repeated token parameter: not a link we made.
    }
    const now = gh.clock.now();
    const outcome = await followEmailLink(gh.storage, token, now, req.ip);
    if (!outcome.ok) return sendPage(reply, 400, emailLinkInvalidPage());
    const current = await currentSession(gh, req);
    return sendPage(reply, 200, emailVerifiedPage({ email: outcome.email, changed: outcome.changed, signedIn: current?.user.id === outcome.userId }));
  });
}
