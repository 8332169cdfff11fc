import type { FastifyInstance } from 'fastify';
import type { SigningKey } from '../../core/model.js';
import type { Gatehouse } from '../../gatehouse.js';
import { html, type Raw } from '../pages/html.js';
import { adminGate, csrfField, form, PAGE, type AdminRequest } from './guard.js';
import { when } from './layout.js';

function state(k: SigningKey, now: number): string {
  if (k.expiresAt !== null && k.expiresAt <= now) return 'expired';
  return k.retiredAt === null ? 'signing' : 'published until its tokens expire';
}

/**
 * Signing keys: what is published at /.well-known/jwks.json, and rotation
 * through the same KeyRing call as `gatehouse keys rotate` and
 * `POST /admin/keys/rotate` (old keys stay published while their tokens live).
 */
export async function keyPages(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const show = async (a: AdminRequest, notice?: Raw | string) => {
    const now = gh.clock.now();
    const keys = (await gh.storage.keys.list()).reverse();
    const published = new Set(gh.keys.jwks().keys.map((k) => k.kid));
    return a.page(200, 'Signing keys', { section: 'keys', notice }, html`<h1>Signing keys</h1>
<p class="lede">Access tokens and ID tokens are signed with these keys. Applications fetch the public halves from
<a href="/.well-known/jwks.json">/.well-known/jwks.json</a> (${published.size} published now).</p>
<table class="grid" id="keys"><thead><tr><th scope="col">Key id</th><th scope="col">Algorithm</th><th scope="col">State</th><th scope="col">Published</th><th scope="col">Created</th><th scope="col">Removed after</th></tr></thead><tbody>
${keys.map((k) => html`<tr><td data-label="Key id" class="mono">${k.kid}</td><td data-label="Algorithm">${k.alg}</td><td data-label="State">${state(k, now)}</td>
<td data-label="Published">${published.has(k.kid) ? 'yes' : 'no'}</td><td data-label="Created">${when(k.createdAt)}</td><td data-label="Removed after">${when(k.expiresAt)}</td></tr>`)}
</tbody></table>
<h2>Rotate</h2>
<p class="muted">New keys sign from now on. The current ones stay published for ${Math.round(gh.oauth.accessTokenTtl / 60) + 1} minutes, as long as the tokens they signed can live, then go.</p>
<form method="post" action="/admin/keys/rotate">${csrfField(a.csrf)}<button class="primary" type="submit">Rotate signing keys</button></form>`);
  };

  app.get('/admin/keys', PAGE, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    return show(a);
  });

  app.post('/admin/keys/rotate', form(), async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    // The admin API's call, word for word (src/http/auth/admin-routes.ts).
    const key = await gh.keys.rotate(gh.clock.now() + gh.oauth.accessTokenTtl * 1000 + 60_000);
    await a.record('keys.rotate', { type: 'signing_key', id: key.kid });
    return show(a, html`Rotated: <span class="mono">${key.rotated.map((k) => `${k.kid} (${k.alg})`).join(', ')}</span> sign from now on.`);
  });
}
