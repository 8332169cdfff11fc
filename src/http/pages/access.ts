import type { Elevation, Role } from '../../core/access/ports.js';
import { html, layout, type Raw } from './html.js';

export interface AccessView {
  username: string;
  csrf: string;
  /** Roles that can be asked for (they have approvers). */
  requestable: (Role & { approvers: string })[];
  /** The person's roles now, elevations included. */
  roles: string[];
  requests: (Elevation & { role: string })[];
  notice?: string;
  error?: string;
  /** What the form showed when it was refused, so it is not typed again. */
  form?: { role?: string; minutes?: string; reason?: string };
}

const time = (ms: number) => {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
};

function requestItem(r: AccessView['requests'][number]): Raw {
  const state = r.state === 'granted' && r.until !== null ? html`granted until ${time(r.until)}`
    : r.state === 'waiting' ? html`waiting for approval (${r.approvals} of ${r.required}) until ${time(r.expiresAt)}`
      : r.state;
  return html`<li class="item"><div class="item-main">
  <span class="item-title">${r.role} · ${r.minutes} min</span>
  <span class="item-detail">${state}</span>
  <span class="item-detail">Reason: ${r.reason}</span>
</div></li>`;
}

/** /account/access: the person's roles, and asking colleagues for one for a while (approved in their chats). */
export function accessPage(v: AccessView): string {
  const f = v.form ?? {};
  return layout('Your access', html`
<h1>Your access</h1>
<p class="lede">Signed in as <strong>${v.username}</strong></p>
${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ''}
${v.error ? html`<p class="error" role="alert" id="access-error">${v.error}</p>` : ''}
<h2 class="list-title" id="roles">Your roles</h2>
${v.roles.length ? html`<ul class="items" aria-labelledby="roles">${v.roles.map((r) => html`<li class="item"><span class="item-title">${r}</span></li>`)}</ul>`
    : html`<p class="muted">You have no roles.</p>`}
<h2 class="list-title" id="ask">Ask for a role</h2>
${v.requestable.length ? html`<p class="muted">Your colleagues who approve the role get your request in their linked chat. Apps see the role in tokens issued while you hold it.</p>
<form method="post" action="/account/access"${v.error ? html` aria-describedby="access-error"` : ''}>
  <input type="hidden" name="csrf_token" value="${v.csrf}">
  <label for="role">Role</label>
  <select id="role" name="role" required>${v.requestable.map((r) => html`<option value="${r.name}"${f.role === r.name ? ' selected' : ''}>${r.name} (approved by ${r.approvers}; up to ${r.maxMinutes ?? 60} minutes)</option>`)}</select>
  <label for="minutes">For how many minutes</label>
  <input id="minutes" name="minutes" type="number" min="1" max="1440" inputmode="numeric" required value="${f.minutes ?? '30'}">
  <label for="reason">Why you need it</label>
  <input id="reason" name="reason" type="text" maxlength="100" required value="${f.reason ?? ''}">
  <div class="actions"><button class="primary" type="submit">Ask</button></div>
</form>` : html`<p class="muted">No role can be asked for.</p>`}
${v.requests.length ? html`<h2 class="list-title" id="requests">Your requests</h2><ul class="items" aria-labelledby="requests">${v.requests.map(requestItem)}</ul>` : ''}
<p class="links"><a href="/account">Your account</a> · <a href="/account/security">Sign-in security</a></p>`);
}
