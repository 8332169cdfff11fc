import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomToken } from '../../core/crypto.js';
import { single, type Params } from '../../core/params.js';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import { RESET_CHAT_TTL_MS, RESET_LINK_TTL_MS, type FormState } from '../../core/account/recovery.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendErrorPage, sendPage } from '../common.js';
import { formBody, paramsOf } from '../input.js';
import { describeBrowser } from '../pages/account.js';
import { chatWaitPage, FORGOT_SCRIPT, forgotPage, linkSentPage, newPasswordPage, passwordSetPage } from '../pages/forgot.js';
import { sendScriptedPage } from './second-step-routes.js';
import { cookieOptions, csrfCookie } from './session-cookie.js';

const FORGOT = 'forgot';
const RESET = 'reset-password';
/** The long poll answers within this, so proxies keep the request open. */
const WAIT_MS = 25_000;

/** The reset this browser holds: the e-mailed link's token or the chat request's (__Host- under https, like the session cookie). */
const resetCookie = (gh: Gatehouse) => (gh.oauth.issuer.startsWith('https:') ? '__Host-gh_reset' : 'gh_reset');

function field(body: Params, name: string): string | undefined {
  try {
    return single(body, name);
  } catch {
    return undefined;
  }
}

/**
 * "Forgot password?" (src/core/account/recovery.ts): GET/POST /login/forgot,
 * the chat's number at /login/forgot/chat with its long poll, and the page
 * with the new password at /login/forgot/reset (the e-mailed link lands there
 * with ?token=, moved at once into a cookie so it leaves the address bar).
 */
export async function forgotRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };
  const ways = () => ({ mail: gh.mailer.enabled, chat: gh.config.notifyBotToken !== undefined });
  const token = (req: FastifyRequest) => req.cookies[resetCookie(gh)];

  /** Login CSRF as the login form has it: an HMAC of a random HttpOnly cookie. */
  const csrfSecret = (req: FastifyRequest, reply: FastifyReply) => {
    let secret = req.cookies[csrfCookie(gh)];
    if (!secret || secret.length > 64) {
      secret = randomToken();
      reply.setCookie(csrfCookie(gh), secret, cookieOptions(gh));
    }
    return secret;
  };
  const form = (req: FastifyRequest, reply: FastifyReply, status: number, opts: { username?: string; error?: string } = {}) =>
    sendPage(reply, status, forgotPage({ csrf: csrfToken(csrfSecret(req, reply), FORGOT), ...ways(), ...opts }));

  app.get('/assets/forgot.js', async (_req, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(FORGOT_SCRIPT));

  app.get('/login/forgot', { config: page }, async (req, reply) => form(req, reply, 200));

  app.post('/login/forgot', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'username', 'via')) } }, async (req, reply) => {
    if (!isForm(req)) return sendErrorPage(reply, 400, 'Bad request', 'the form must be sent as a form');
    const body = (req.body ?? {}) as Params;
    if (!csrfValid(req.cookies[csrfCookie(gh)], FORGOT, body.csrf_token)) return sendErrorPage(reply, 403, 'Request expired', 'This form has expired. Open it again.');
    const username = field(body, 'username')?.trim() ?? '';
    const via = field(body, 'via') === 'chat' ? 'chat' : 'email';
    if (!username || username.length > 254) return form(req, reply, 400, { error: 'Enter your username or e-mail address.' });
    if (via === 'email' ? !ways().mail : !ways().chat) return form(req, reply, 400, { username, error: 'That way is not available on this server.' });
    const outcome = await gh.recovery.request(username, via, req.ip, describeBrowser(req.headers['user-agent'] ?? null));
    if (!outcome.ok) {
      reply.header('retry-after', String(outcome.retryAfterSeconds));
      return form(req, reply, 429, { username, error: 'Too many requests for this account or from this address. Wait 15 minutes and try again.' });
    }
    if (outcome.via === 'email') return sendPage(reply, 200, linkSentPage(RESET_LINK_TTL_MS / 60_000));
    reply.setCookie(resetCookie(gh), outcome.token, cookieOptions(gh, Math.floor(RESET_CHAT_TTL_MS / 1000)));
    return sendScriptedPage(reply, 200, chatWaitPage(outcome.number));
  });

  const refused = (reply: FastifyReply, state: Exclude<FormState, { ok: true }>) => {
    if (state.reason === 'denied') {
      reply.clearCookie(resetCookie(gh), cookieOptions(gh));
      return sendErrorPage(reply, 403, 'Reset denied', 'This password reset was denied in chat. Nothing was changed.');
    }
    reply.clearCookie(resetCookie(gh), cookieOptions(gh));
    return sendErrorPage(reply, 400, 'Link expired', 'This reset link has expired or was already used. Ask for a new one at /login/forgot.');
  };

  /** Without script the waiting page reloads itself: an approved reset continues to the form. */
  app.get('/login/forgot/chat', { config: page }, async (req, reply) => {
    const r = await gh.recovery.get(token(req));
    if (!r?.approval) return refused(reply, { ok: false, reason: 'expired' });
    if (r.approval.state !== 'waiting') return reply.redirect('/login/forgot/reset', 303);
    return sendScriptedPage(reply, 200, chatWaitPage(r.approval.number));
  });

  app.get('/login/forgot/wait', async (req, reply) => {
    const abort = new AbortController();
    reply.raw.on('close', () => abort.abort());
    const state = await gh.recovery.wait(token(req), WAIT_MS, abort.signal);
    return reply.header('cache-control', 'no-store').send({ state });
  });

  app.get('/login/forgot/reset', { config: page, schema: { querystring: paramsOf('token') } }, async (req, reply) => {
    const fromLink = field(req.query as Params, 'token');
    if (fromLink !== undefined) {
      if (fromLink.length > 128) return refused(reply, { ok: false, reason: 'expired' });
      reply.setCookie(resetCookie(gh), fromLink, cookieOptions(gh, Math.floor(RESET_LINK_TTL_MS / 1000)));
      return reply.redirect('/login/forgot/reset', 303);
    }
    const t = token(req);
    const state = await gh.recovery.form(t);
    if (!state.ok) return state.reason === 'waiting' ? reply.redirect('/login/forgot/chat', 303) : refused(reply, state);
    return sendPage(reply, 200, newPasswordPage({ csrf: csrfToken(t!, RESET), username: state.username, needsCode: state.needsCode }));
  });

  app.post('/login/forgot/reset', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'password', 'code', 'username')) } }, async (req, reply) => {
    if (!isForm(req)) return sendErrorPage(reply, 400, 'Bad request', 'the form must be sent as a form');
    const body = (req.body ?? {}) as Params;
    const t = token(req);
    if (!csrfValid(t, RESET, body.csrf_token)) return sendErrorPage(reply, 403, 'Request expired', 'This form has expired. Ask for a new reset at /login/forgot.');
    const password = field(body, 'password') ?? '';
    const code = field(body, 'code')?.trim() || undefined;
    if (code !== undefined && code.length > 64) return sendErrorPage(reply, 400, 'Bad request', 'That code is too long.');
    const outcome = await gh.recovery.complete(t, password, code, req.ip);
    if (outcome.ok) {
      reply.clearCookie(resetCookie(gh), cookieOptions(gh));
      return sendPage(reply, 200, passwordSetPage(outcome.username, outcome.unlocked));
    }
    if (outcome.reason === 'code' || outcome.reason === 'password') {
      const state = await gh.recovery.form(t);
      if (!state.ok) return refused(reply, state);
      if (outcome.reason === 'code' && outcome.retryAfterSeconds !== undefined) reply.header('retry-after', String(outcome.retryAfterSeconds));
      const status = outcome.reason === 'password' ? 400 : outcome.retryAfterSeconds !== undefined ? 429 : 401;
      return sendPage(reply, status, newPasswordPage({ csrf: csrfToken(t!, RESET), username: state.username, needsCode: state.needsCode, error: outcome.message }));
    }
    if (outcome.reason === 'waiting') return reply.redirect('/login/forgot/chat', 303);
    return refused(reply, outcome);
  });
}
