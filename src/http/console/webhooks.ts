import type { FastifyInstance } from 'fastify';
import { DELIVERY_STATUSES, endpointOrThrow, replayFailed, resendMessage, setEndpointEnabled } from '../../core/notify/endpoints.js';
import type { Delivery, DeliveryStatus, Endpoint } from '../../core/notify/ports.js';
import { invalidRequest } from '../../core/errors.js';
import type { Params } from '../../core/params.js';
import type { Gatehouse } from '../../gatehouse.js';
import { paramsOf } from '../input.js';
import { html, raw, type Raw } from '../pages/html.js';
import { adminGate, csrfField, field, form, PAGE, pathId, refusal, type AdminRequest } from './guard.js';
import { when } from './layout.js';

type Id = { Params: { id: string } };

/** The replay form's choices, seconds back from now. */
const WINDOWS = [['3600', 'the last hour'], ['86400', 'the last 24 hours'], ['604800', 'the last 7 days']] as const;

const target = (e: Endpoint) => e.url ?? (e.chatId ? `chat ${e.chatId}` : e.id);

function deliveryRow(d: Delivery, endpointId: string, csrf: string): Raw {
  const action = `/admin/webhooks/${encodeURIComponent(endpointId)}/messages/${encodeURIComponent(d.eventId)}/resend`;
  return html`<tr><td data-label="Message" class="mono">${d.eventId}</td>
<td data-label="Status"${d.status === 'failed' ? raw(' class="status-failed"') : ''}>${d.status}</td><td data-label="Attempts">${d.attempts}</td>
<td data-label="Last answer">${d.lastStatus ?? ''} ${d.lastError ?? ''}</td><td data-label="Created">${when(d.createdAt)}</td>
<td data-label="Actions">${d.status === 'pending' ? '' : html`<form method="post" action="${action}">${csrfField(csrf)}<button class="small" type="submit" aria-label="Send message ${d.eventId} again">Send again</button></form>`}</td></tr>`;
}

/** Webhook endpoints, their deliveries, the dead letters (failed for good) and replay. */
export async function webhookPages(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const events = gh.storage.events;

  app.get('/admin/webhooks', PAGE, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    const endpoints = await events.endpoints.list();
    const failed = await Promise.all(endpoints.map((e) => events.deliveries.list(e.id, { status: 'failed', limit: 100 }).then((l) => l.length)));
    return a.page(200, 'Webhooks', { section: 'webhooks' }, html`<h1>Webhook endpoints</h1>
${endpoints.length
    ? html`<table class="grid"><thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Dead letters</th></tr></thead><tbody>
${endpoints.map((e, i) => html`<tr><td data-label="Endpoint"><a href="/admin/webhooks/${encodeURIComponent(e.id)}">${target(e)}</a></td>
<td data-label="Events">${e.eventTypes.join(', ')}</td><td data-label="State">${e.disabledAt ? `disabled (${e.disabledReason ?? ''})` : e.failingSince ? html`failing since ${when(e.failingSince)}` : 'enabled'}</td>
<td data-label="Dead letters">${failed[i] === 100 ? '100 or more' : failed[i]}</td></tr>`)}
</tbody></table>`
    : html`<p class="muted">No endpoints. Add one with <code>gatehouse webhook create --url U --events e1,e2</code>.</p>`}`);
  });

  const detail = async (a: AdminRequest, id: string, q: Params, status = 200, notice?: Raw | string, error?: string) => {
    const e = await events.endpoints.get(id);
    if (!e) return a.page(404, 'Not found', { section: 'webhooks', error: 'There is no webhook endpoint with this id.' }, html`<p class="links"><a href="/admin/webhooks">All endpoints</a></p>`);
    const wanted = field(q, 'status');
    const only = (DELIVERY_STATUSES as readonly string[]).includes(wanted ?? '') ? wanted as DeliveryStatus : undefined;
    const deliveries = await events.deliveries.list(id, { limit: 100, ...(only ? { status: only } : {}) });
    const base = `/admin/webhooks/${encodeURIComponent(id)}`;
    const filter = (s: string | undefined, label: string) =>
      html`<a class="button small-link" href="${s ? `${base}?status=${s}` : base}"${only === s ? raw(' aria-current="page"') : ''}>${label}</a>`;
    return a.page(status, 'Webhook endpoint', { section: 'webhooks', notice, error }, html`<h1>${target(e)}</h1>
<p class="lede">Events: ${e.eventTypes.join(', ')} · ${e.disabledAt ? `disabled (${e.disabledReason ?? ''})` : 'enabled'}${e.ordered ? ' · ordered' : ''}</p>
<div class="row-actions">
<form method="post" action="${base}/${e.disabledAt ? 'enable' : 'disable'}">${csrfField(a.csrf)}<button class="small${e.disabledAt ? '' : ' danger'}" type="submit">${e.disabledAt ? 'Enable' : 'Disable'}</button></form>
</div>
<h2 id="replay">Replay dead letters</h2>
<form method="post" action="${base}/replay" aria-labelledby="replay">${csrfField(a.csrf)}
<div class="field"><label for="replay-window">Send every failed message again from</label><select id="replay-window" name="window">
${WINDOWS.map(([v, label]) => html`<option value="${v}">${label}</option>`)}</select></div>
<button class="primary" type="submit">Replay failed messages</button></form>
<h2>Deliveries</h2>
<nav aria-label="Filter deliveries" class="row-actions">${filter(undefined, 'All')}${filter('failed', 'Dead letters')}${filter('pending', 'Pending')}${filter('delivered', 'Delivered')}</nav>
${deliveries.length
    ? html`<table class="grid" id="deliveries"><thead><tr><th scope="col">Message</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead><tbody>
${deliveries.map((d) => deliveryRow(d, id, a.csrf))}</tbody></table>`
    : html`<p class="muted">No deliveries${only ? ` with status ${only}` : ''}.</p>`}
<p class="links"><a href="/admin/webhooks">All endpoints</a></p>`);
  };

  app.get<Id>('/admin/webhooks/:id', { ...PAGE, schema: { querystring: paramsOf('status') } }, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    return detail(a, pathId(req.params.id), req.query as Params);
  });

  type P = { id: string; msg?: string };
  const act = (path: string, names: string[], run: (a: AdminRequest, p: P) => Promise<Raw | string>) =>
    app.post<{ Params: P }>(path, form(...names), async (req, reply) => {
      const a = await adminGate(gh, req, reply);
      if (!a) return reply;
      const id = pathId(req.params.id);
      try {
        return detail(a, id, {}, 200, await run(a, { ...req.params, id }));
      } catch (e) {
        const r = refusal(e);
        return detail(a, id, {}, r.status, undefined, r.message);
      }
    });

  act('/admin/webhooks/:id/messages/:msg/resend', [], async (a, p) => {
    const msg = pathId(p.msg ?? '');
    await resendMessage(events, gh.clock, p.id, msg);
    await a.record('webhook.resend', { type: 'webhook_message', id: `${p.id}/${msg}` });
    return html`Message <span class="mono">${msg}</span> will be sent again.`;
  });
  act('/admin/webhooks/:id/replay', ['window'], async (a, p) => {
    const seconds = WINDOWS.find(([v]) => v === field(a.body, 'window'))?.[0];
    if (!seconds) throw invalidRequest('choose how far back to replay');
    const n = await replayFailed(events, gh.clock, p.id, gh.clock.now() - Number(seconds) * 1000);
    await a.record('webhook.replay', { type: 'webhook_endpoint', id: p.id });
    return `${n} failed message${n === 1 ? '' : 's'} will be sent again.`;
  });
  for (const enabled of [true, false]) {
    act(`/admin/webhooks/:id/${enabled ? 'enable' : 'disable'}`, [], async (a, p) => {
      await endpointOrThrow(events, p.id);
      await setEndpointEnabled(events, gh.clock, p.id, enabled);
      await a.record(enabled ? 'webhook.enable' : 'webhook.disable', { type: 'webhook_endpoint', id: p.id });
      return enabled ? 'The endpoint is enabled.' : 'The endpoint is disabled; its pending messages were marked failed.';
    });
  }
}
