import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Params } from '../../core/params.js';
import { csrfValid } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendErrorPage } from '../common.js';
import { currentSession } from './session-cookie.js';

/**
 * The checks every signed-in page's form passes first: a form body, a
 * session (else to sign-in and back to `path`), and the CSRF token that page
 * (`purpose`) issued. Undefined when it answered the request itself.
 */
export async function signedInForm(gh: Gatehouse, req: FastifyRequest, reply: FastifyReply, page: { path: string; purpose: string; name: string }) {
  if (!isForm(req)) {
    sendErrorPage(reply, 400, 'Bad request', 'the request must be sent as a form');
    return undefined;
  }
  const current = await currentSession(gh, req);
  if (!current) {
    reply.redirect(`/login?return_to=${encodeURIComponent(page.path)}`, 303);
    return undefined;
  }
  const body = (req.body ?? {}) as Params;
  if (!csrfValid(current.id, page.purpose, body.csrf_token)) {
    sendErrorPage(reply, 403, 'Request expired', `This form is no longer valid. Reload the ${page.name} and try again.`);
    return undefined;
  }
  return { current, body };
}
