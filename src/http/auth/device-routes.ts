import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatehouseError } from '../../core/errors.js';
import { authenticateClient } from '../../core/oauth/client-auth.js';
import { DEVICE_AUTHORIZATION_PATH, DEVICE_PAGE_PATH, formatUserCode, normaliseUserCode } from '../../core/oauth/device.js';
import type { Params } from '../../core/params.js';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { formParams, isForm, noStore, sendErrorPage, sendPage } from '../common.js';
import { PARAMS, formBody, paramsOf } from '../input.js';
import { html, layout, raw } from '../pages/html.js';
import { consentPage } from '../pages/pages.js';
import { clientCertificateReader } from '../tls.js';
import { currentSession } from './session-cookie.js';

const DEVICE = 'device';
const DECISION_PATH = `${DEVICE_PAGE_PATH}/decision`;

/** A form field as text: repeated or missing fields are simply not there. */
const text = (p: Params, name: string) => (typeof p[name] === 'string' ? p[name] : undefined);

function codePage(csrf: string, userCode: string, error?: string): string {
  // The hint names the format the device shows (RFC 8628 §6.1: 8 letters, a dash for reading); the error, when there is one, joins it.
  return layout('Connect a device', html`
<h1>Connect a device</h1>
<p class="lede">Enter the code your TV, console or command line shows.</p>
${error ? html`<p class="error" id="user_code_error" role="alert">${error}</p>` : ''}
<form method="post" action="${DEVICE_PAGE_PATH}">
  <input type="hidden" name="csrf_token" value="${csrf}">
  <div class="field">
    <label for="user_code">Code</label>
    <p class="hint" id="user_code_hint">8 letters, shown as XXXX-XXXX. Upper or lower case; the dash is optional.</p>
    <input id="user_code" class="code-input" name="user_code" type="text" value="${userCode}" placeholder="XXXX-XXXX" inputmode="text" autocomplete="one-time-code" autocapitalize="characters" autocorrect="off" spellcheck="false" maxlength="20" required autofocus aria-describedby="user_code_hint${error ? ' user_code_error' : ''}"${error ? raw(' aria-invalid="true"') : ''}>
  </div>
  <div class="actions"><button class="primary" type="submit">Continue</button></div>
</form>`);
}

function donePage(approved: boolean): string {
  return layout(approved ? 'Device connected' : 'Request denied', html`
<h1>${approved ? 'Device connected' : 'Request denied'}</h1>
<p>${approved ? 'You can go back to your device: it continues by itself.' : 'The device did not get access to your account.'}</p>`);
}

/** RFC 8628 §3.1: the device authorization endpoint (JSON; no cookies). */
export async function deviceAuthorizationRoute(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const clientCert = clientCertificateReader(gh.config);
  app.post(DEVICE_AUTHORIZATION_PATH, { config: { kind: 'json' as const }, schema: { body: formBody(PARAMS) } }, async (req, reply) => {
    noStore(reply);
    const params = formParams(req);
    // Confidential clients authenticate as at the token endpoint; public ones send client_id (RFC 8628 §3.1).
    const { client } = await authenticateClient(gh.storage.clients, {
      params, authorization: req.headers.authorization, address: req.ip, clientCertThumbprint: clientCert(req.raw),
    }, gh.clock.now(), gh.clientThrottle, gh.clientAssertions);
    return gh.device.authorize(client, params);
  });
}

/**
 * RFC 8628 §3.3: the person's page: sign in, type the code, then the consent
 * page. Forms carry a CSRF token bound to the session.
 */
export async function devicePages(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };
  const signIn = (reply: FastifyReply, userCode: string | undefined, status: 302 | 303) =>
    reply.redirect(`/login?return_to=${encodeURIComponent(`${DEVICE_PAGE_PATH}${userCode ? `?user_code=${encodeURIComponent(userCode.slice(0, 20))}` : ''}`)}`, status);

  app.get(DEVICE_PAGE_PATH, { config: page, schema: { querystring: paramsOf('user_code') } }, async (req, reply) => {
    const userCode = text(req.query as Params, 'user_code');
    const current = await currentSession(gh, req);
    if (!current) return signIn(reply, userCode, 302);
    // §3.3.1: a code from verification_uri_complete is shown for the person to confirm, never submitted for them.
    return sendPage(reply, 200, codePage(csrfToken(current.id, DEVICE), (userCode ?? '').slice(0, 20)));
  });

  const guard = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!isForm(req)) {
      sendErrorPage(reply, 400, 'Bad request', 'the request must be sent as a form');
      return undefined;
    }
    const body = (req.body ?? {}) as Params;
    const current = await currentSession(gh, req);
    if (!current) {
      signIn(reply, text(body, 'user_code'), 303);
      return undefined;
    }
    if (!csrfValid(current.id, DEVICE, body.csrf_token)) {
      sendErrorPage(reply, 403, 'Request expired', 'This form is no longer valid. Open the device page again.');
      return undefined;
    }
    return { current, body };
  };

  app.post(DEVICE_PAGE_PATH, { config: page, schema: { body: formBody(paramsOf('user_code', 'csrf_token')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    const { current, body } = ok;
    const typed = text(body, 'user_code') ?? '';
    const csrf = csrfToken(current.id, DEVICE);
    let found;
    try {
      found = await gh.device.enter(typed, current.user.id, req.ip);
    } catch (e) {
      if (e instanceof GatehouseError && e.status === 429) {
        reply.header('retry-after', String(e.retryAfterSeconds ?? 60));
        return sendPage(reply, 429, codePage(csrf, '', 'Too many wrong codes. Wait a while, then try again.'));
      }
      throw e;
    }
    if ('problem' in found) return sendPage(reply, 400, codePage(csrf, typed.slice(0, 20), found.problem));
    return sendPage(reply, 200, consentPage({
      clientName: found.client.name, username: current.user.username, name: current.user.name, scope: found.request.scope,
      returnsTo: undefined, csrf, action: DECISION_PATH, fields: { request: found.request.id },
      // RFC 8628 §5.4: the code again, so the person checks it is the one their device shows.
      deviceCode: formatUserCode(normaliseUserCode(typed) ?? typed.toUpperCase()),
    }));
  });

  app.post(DECISION_PATH, { config: page, schema: { body: formBody(paramsOf('request', 'approve', 'csrf_token')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    const { current, body } = ok;
    const id = text(body, 'request') ?? '';
    const approve = text(body, 'approve');
    if (approve !== 'true' && approve !== 'false') return sendErrorPage(reply, 400, 'Bad request', 'approve must be true or false');
    if (!/^[0-9a-f-]{36}$/.test(id) || !(await gh.device.decide(id, current.user.id, approve === 'true'))) {
      return sendErrorPage(reply, 400, 'This request is no longer open', 'It was already decided, has expired, or is not yours. Start again on your device.');
    }
    return sendPage(reply, 200, donePage(approve === 'true'));
  });
}
