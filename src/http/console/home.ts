import type { FastifyInstance } from 'fastify';
import type { Gatehouse } from '../../gatehouse.js';
import { html } from '../pages/html.js';
import { adminGate, PAGE } from './guard.js';

/** {auth_url}/admin: what there is, one link per section. */
export async function homePage(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  app.get('/admin', PAGE, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    const [clients, endpoints] = await Promise.all([gh.storage.clients.list(), gh.storage.events.endpoints.list()]);
    const keys = gh.keys.jwks().keys.length;
    return a.page(200, 'Admin console', { section: 'home' }, html`<h1>Admin console</h1>
<p class="lede">Everything here is also in the admin HTTP API and the command line; each change is recorded as an <code>admin.action</code> event.</p>
<div class="cards">
<a href="/admin/clients"><strong>${clients.length}</strong>Clients</a>
<a href="/admin/users"><strong>Users</strong>lock, unlock, sign out</a>
<a href="/admin/keys"><strong>${keys}</strong>Published signing keys</a>
<a href="/admin/bots"><strong>Bots</strong>and their webhooks</a>
<a href="/admin/webhooks"><strong>${endpoints.length}</strong>Webhook endpoints</a>
</div>`);
  });
}
