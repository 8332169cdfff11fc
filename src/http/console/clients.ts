import type { FastifyInstance, FastifyReply } from 'fastify';
import { createClient, describeClient, rotateClientSecret } from '../../core/admin.js';
import { lines, updateClientRegistration, type AdminAction } from '../../core/console/actions.js';
import { notFound } from '../../core/errors.js';
import type { Client } from '../../core/model.js';
import type { Params } from '../../core/params.js';
import type { Gatehouse } from '../../gatehouse.js';
import { html, type Raw } from '../pages/html.js';
import { adminGate, csrfField, field, form, PAGE, pathId, refusal, type AdminRequest } from './guard.js';
import { when } from './layout.js';

type Id = { Params: { id: string } };

const GRANTS = [
  ['authorization_code', 'Authorization code (people sign in)'],
  ['refresh_token', 'Refresh token'],
  ['client_credentials', 'Client credentials (machine to machine)'],
] as const;

const all = (v: Params[string]): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

function clientRows(clients: Client[]): Raw {
  if (!clients.length) return html`<p class="muted">No clients yet.</p>`;
  return html`<table class="grid"><thead><tr><th scope="col">Name</th><th scope="col">Client id</th><th scope="col">Type</th><th scope="col">Grant types</th><th scope="col">Created</th></tr></thead><tbody>
${clients.map((c) => html`<tr><td data-label="Name"><a href="/admin/clients/${encodeURIComponent(c.id)}">${c.name}</a></td>
<td data-label="Client id" class="mono">${c.id}</td><td data-label="Type">${c.secretHash ? 'confidential' : 'public'}</td>
<td data-label="Grant types">${c.grantTypes.join(', ')}</td><td data-label="Created">${when(c.createdAt)}</td></tr>`)}
</tbody></table>`;
}

function newClientForm(csrf: string, values: Params = {}): Raw {
  const chosen = all(values.grant_types);
  const grants = chosen.length || values.name !== undefined ? chosen : ['authorization_code', 'refresh_token'];
  return html`<form method="post" action="/admin/clients" id="new-client">
${csrfField(csrf)}
<div class="field"><label for="client-name">Name</label><input id="client-name" name="name" type="text" required maxlength="100" value="${field(values, 'name') ?? ''}"></div>
<div class="field"><label for="client-redirects">Redirect URIs</label>
<textarea id="client-redirects" name="redirect_uris" aria-describedby="client-redirects-hint" spellcheck="false">${field(values, 'redirect_uris') ?? ''}</textarea>
<p class="hint" id="client-redirects-hint">One a line, exactly as the application sends them; https except on loopback.</p></div>
<div class="field"><label for="client-scope">Scope</label><input id="client-scope" name="scope" type="text" spellcheck="false" value="${field(values, 'scope') ?? ''}" aria-describedby="client-scope-hint">
<p class="hint" id="client-scope-hint">Space-separated, for example <code>user chat</code>.</p></div>
<fieldset><legend>Grant types</legend>
${GRANTS.map(([g, label]) => html`<label class="check"><input type="checkbox" name="grant_types" value="${g}"${grants.includes(g) ? html` checked` : ''}> ${label}</label>`)}
</fieldset>
<label class="check"><input type="checkbox" name="public" value="true"${field(values, 'public') ? html` checked` : ''}> Public client (no secret: a browser or mobile app)</label>
<label class="check"><input type="checkbox" name="trusted" value="true"${field(values, 'trusted') ? html` checked` : ''}> First-party (skip the consent page)</label>
<button class="primary" type="submit">Create client</button>
</form>`;
}

function clientDetail(c: Client, csrf: string): Raw {
  const d = describeClient(c);
  const id = encodeURIComponent(c.id);
  return html`<h1>${c.name}</h1>
<p class="lede mono">${c.id}</p>
<table class="grid"><tbody>
<tr><th scope="row">Type</th><td>${c.secretHash ? 'confidential' : 'public'} · ${String(d.token_endpoint_auth_method ?? '')}</td></tr>
<tr><th scope="row">Grant types</th><td>${c.grantTypes.join(', ')}</td></tr>
<tr><th scope="row">Access tokens</th><td>${c.tokenFormat}</td></tr>
<tr><th scope="row">Secret rotated</th><td>${c.previousSecretExpiresAt ? html`previous secret valid until ${when(c.previousSecretExpiresAt)}` : 'never'}</td></tr>
<tr><th scope="row">Created</th><td>${when(c.createdAt)}</td></tr>
</tbody></table>
<h2 id="edit">Redirect URIs and scope</h2>
<form method="post" action="/admin/clients/${id}" aria-labelledby="edit">
${csrfField(csrf)}
<div class="field"><label for="edit-redirects">Redirect URIs (one a line)</label>
<textarea id="edit-redirects" name="redirect_uris" spellcheck="false">${c.redirectUris.join('\n')}</textarea></div>
<div class="field"><label for="edit-scope">Scope</label><input id="edit-scope" name="scope" type="text" spellcheck="false" value="${c.scope.join(' ')}"></div>
<button class="primary" type="submit">Save</button>
</form>
<h2>Secret and removal</h2>
<div class="row-actions">
${c.secretHash ? html`<form method="post" action="/admin/clients/${id}/secret">${csrfField(csrf)}<button class="small" type="submit">Rotate secret</button></form>` : ''}
<form method="post" action="/admin/clients/${id}/delete">${csrfField(csrf)}<button class="small danger" type="submit" aria-label="Delete client ${c.name}">Delete client</button></form>
</div>
<p class="links"><a href="/admin/clients">All clients</a></p>`;
}

const secretNotice = (clientId: string, secret: string, words: Raw | string) =>
  html`${words} <strong>Copy the secret now:</strong> it is shown once and stored only as a hash.
<span class="secret" id="client-id">client_id: ${clientId}</span><span class="secret" id="client-secret">client_secret: ${secret}</span>`;

/** Clients: list, create, edit redirect URIs and scope, rotate the secret, delete (the admin API's operations). */
export async function clientPages(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const list = async (a: AdminRequest, status: number, notice?: Raw | string, error?: string, values?: Params) =>
    a.page(status, 'Clients', { section: 'clients', notice, error }, html`<h1>Clients</h1>
${clientRows(await gh.storage.clients.list())}
<h2>New client</h2>
${newClientForm(a.csrf, values)}`);

  app.get('/admin/clients', PAGE, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    const done = field(req.query as Params, 'done');
    return list(a, 200, done === 'deleted' ? 'The client was deleted.' : undefined);
  });

  app.post('/admin/clients', form('name', 'redirect_uris', 'scope', 'grant_types', 'public', 'trusted'), async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    const b = a.body;
    try {
      const { client, secret } = await createClient(gh.storage, gh.clock, {
        name: (field(b, 'name') ?? '').trim(), redirectUris: lines(field(b, 'redirect_uris') ?? ''), scope: field(b, 'scope'),
        grantTypes: all(b.grant_types), public: field(b, 'public') === 'true', trusted: field(b, 'trusted') === 'true',
      });
      await a.record('client.create', { type: 'client', id: client.id });
      const words = html`Created <a href="/admin/clients/${encodeURIComponent(client.id)}">${client.name}</a>.`;
      return list(a, 201, secret ? secretNotice(client.id, secret, words) : html`${words} client_id: <span class="mono">${client.id}</span>`);
    } catch (e) {
      const r = refusal(e);
      return list(a, r.status, undefined, r.message, b);
    }
  });

  const detail = async (a: AdminRequest, id: string, status = 200, notice?: Raw | string, error?: string) => {
    const c = await gh.storage.clients.get(id);
    if (!c) return a.page(404, 'Not found', { section: 'clients', error: 'There is no client with this id.' }, html`<p class="links"><a href="/admin/clients">All clients</a></p>`);
    return a.page(status, c.name, { section: 'clients', notice, error }, clientDetail(c, a.csrf));
  };

  app.get<Id>('/admin/clients/:id', PAGE, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    return detail(a, pathId(req.params.id));
  });

  /**
   * A change to one client: the administrator's gate, the action, its
   * admin.action event; a refusal is shown on the client's page.
   */
  const clientAction = (path: string, fields: string[], action: AdminAction, run: (a: AdminRequest, id: string, reply: FastifyReply) => Promise<() => unknown>) =>
    app.post<Id>(path, form(...fields), async (req, reply) => {
      const a = await adminGate(gh, req, reply);
      if (!a) return reply;
      const id = pathId(req.params.id);
      let answer: () => unknown;
      try {
        answer = await run(a, id, reply);
      } catch (e) {
        const r = refusal(e);
        return detail(a, id, r.status, undefined, r.message);
      }
      await a.record(action, { type: 'client', id });
      return answer();
    });

  clientAction('/admin/clients/:id', ['redirect_uris', 'scope'], 'client.update', async (a, id) => {
    await updateClientRegistration(gh.storage, id, { redirectUris: lines(field(a.body, 'redirect_uris') ?? ''), scope: field(a.body, 'scope') ?? '' });
    return () => detail(a, id, 200, 'Saved.');
  });

  clientAction('/admin/clients/:id/secret', [], 'client.rotate_secret', async (a, id) => {
    const secret = await rotateClientSecret(gh.storage, gh.clock, id, gh.oauth.secretRotationGrace);
    return () => detail(a, id, 200, secretNotice(id, secret, `New secret. The previous one keeps working for ${gh.oauth.secretRotationGrace} seconds.`));
  });

  clientAction('/admin/clients/:id/delete', [], 'client.delete', async (_a, id, reply) => {
    if (!(await gh.storage.clients.delete(id))) throw notFound('unknown client');
    return () => reply.redirect('/admin/clients?done=deleted', 303);
  });
}
