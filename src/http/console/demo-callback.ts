import type { FastifyInstance } from 'fastify';
import { single, type Params } from '../../core/params.js';
import type { Gatehouse } from '../../gatehouse.js';
import { sendPage } from '../common.js';
import { paramsOf } from '../input.js';
import { html, type Raw } from '../pages/html.js';
import { consoleLayout } from './layout.js';

/** Where the README's first sign-in lands (README, "A first sign-in"): a redirect URI a person can reach. */
export const DEMO_CALLBACK_PATH = '/demo/callback';

/**
 * The exchange the page prints after the code, word for word the README's
 * (test/cli/readme-walkthrough.test.ts compares them): it uses the shell
 * variables the README's earlier steps set.
 */
export const EXCHANGE_COMMAND =
  `TOKENS=$(curl -s -u "$APP_ID:$APP_SECRET" -d grant_type=authorization_code -d code="$CODE" -d redirect_uri="$AUTH${DEMO_CALLBACK_PATH}" "$AUTH/oauth/token"); echo "$TOKENS"`;

/**
 * Only a value shaped like the codes Gatehouse issues is put into a shell
 * command: the page is reachable with any query, and a crafted link must
 * not make it print a command that does something else.
 */
const CODE_SHAPE = /^[A-Za-z0-9_~.-]{8,512}$/;

function value(q: Params, name: string): string | undefined {
  try {
    return single(q, name);
  } catch {
    return undefined;
  }
}

function answerPage(gh: Gatehouse, q: Params): { status: number; body: Raw } {
  const code = value(q, 'code');
  const error = value(q, 'error');
  const state = value(q, 'state');
  const iss = value(q, 'iss');
  if (error) {
    const description = value(q, 'error_description');
    return { status: 200, body: html`<h1>The application was not given access</h1>
<p class="lede">Gatehouse answered with <code>error=${error}</code>${description ? html`: ${description}` : ''}.</p>
<p class="muted">Clicking <strong>Deny</strong> on the consent page ends here with <code>access_denied</code>. Open the authorization URL again to start over.</p>` };
  }
  if (!code || !CODE_SHAPE.test(code)) {
    return { status: 400, body: html`<h1>No authorization code here</h1>
<p class="lede">This page shows the authorization code Gatehouse sends back after you sign in and allow an application.</p>
<p class="muted">Open the authorization URL from the README's first sign-in in this browser to get one.</p>` };
  }
  return { status: 200, body: html`<h1>You allowed the application</h1>
<p class="lede">Gatehouse redirected here with an authorization code, as it would to the application's own address.</p>
<p><strong>Run these two lines in the same terminal now:</strong> the code works once, and only for ${gh.oauth.codeTtl} seconds.</p>
<pre class="command" id="next-command" tabindex="0">CODE='${code}'
${EXCHANGE_COMMAND}</pre>
<p class="muted">The answer is a JSON object with <code>access_token</code>. Then continue with the README's next step.</p>
<p class="muted">Also received: <code>state=${state ?? ''}</code> (an application checks it is the value it sent)${iss ? html` and <code>iss=${iss}</code> (the server that answered, RFC 9207)` : ''}.</p>
<p class="muted">Too late? Open the authorization URL again: you stay signed in, so Gatehouse sends a fresh code straight back.</p>` };
}

/** The landing page for the README's walkthrough; keeps nothing, only shows the query it received. */
export async function demoCallbackRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  app.get(DEMO_CALLBACK_PATH, { config: { kind: 'page' }, schema: { querystring: paramsOf('code', 'state', 'iss', 'error', 'error_description') } }, async (req, reply) => {
    const { status, body } = answerPage(gh, req.query as Params);
    return sendPage(reply, status, consoleLayout('Authorization code', { section: 'demo' }, body));
  });
}
