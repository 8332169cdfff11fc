import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { createEndpoint } from '../../src/core/notify/endpoints.js';
import { expectErrorJson, fuzz, shots, type Shot } from '../input/fuzz-support.js';
import { csrfOf, signedInAdmin } from './support.js';

/**
 * Random requests at the admin console as a signed-in administrator's
 * browser (session cookie, Accept: text/html), with the session's CSRF token
 * among the values so forms get past it: never a 5xx; pages are HTML with
 * the pages' headers; what falls through to the JSON API keeps its shape.
 */
describe('admin console: random requests', { timeout: 180_000 }, () => {
  let server: TestServer;
  let cookie: string;
  let csrf: string;
  let ids: string[];
  before(async () => {
    server = await startServer({ env: { GATEHOUSE_ROLES: 'auth', GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    const admin = await signedInAdmin(server, 'fuzzer');
    cookie = `gh_session=${admin.cookie('gh_session')}`;
    csrf = await csrfOf(admin);
    const client = await server.createClient({ name: 'Fuzzed' });
    const other = await server.createUser('target');
    const endpoint = await createEndpoint(server.gh.storage.events, server.gh.clock, { url: 'http://127.0.0.1:9/in', events: ['client.created'] }, { checkUrl: server.gh.outbound.registered.check });
    ids = [client.id, other.id, endpoint.id, 'nope', '%00', '%E0%A4%A', 'x'.repeat(300), '__proto__', 'constructor'];
  });
  after(async () => server?.close());

  it('never a 5xx; pages are HTML, never framed or cached', async () => {
    const paths = ['/admin', '/admin/clients', '/admin/users', '/admin/keys', '/admin/keys/rotate', '/admin/bots', '/admin/webhooks', ...ids.flatMap((id) => [
      `/admin/clients/${id}`, `/admin/clients/${id}/secret`, `/admin/clients/${id}/delete`, `/admin/users/${id}`, `/admin/users/${id}/lock`, `/admin/users/${id}/unlock`,
      `/admin/users/${id}/sessions/reset`, `/admin/users/${id}/sessions/end`, `/admin/users/${id}/apps/remove`, `/admin/webhooks/${id}`, `/admin/webhooks/${id}/replay`,
      `/admin/webhooks/${id}/enable`, `/admin/webhooks/${id}/disable`, `/admin/webhooks/${id}/messages/${id}/resend`])];
    const browser = (s: Shot): Shot => {
      const { authorization: _dropped, ...rest } = s.headers;
      const headers = { ...rest, accept: 'text/html', cookie: s.headers.cookie && s.path.length % 5 === 0 ? s.headers.cookie : cookie };
      return { ...s, headers };
    };
    const sent = await fuzz(server.url, shots({
      paths,
      methods: ['GET', 'POST', 'POST'],
      names: ['csrf_token', 'name', 'redirect_uris', 'scope', 'grant_types', 'public', 'trusted', 'sid', 'client_id', 'window', 'q', 'page', 'status'],
      known: [csrf, csrf, csrf, ...ids.slice(0, 3), 'https://app.example/cb', 'http://127.0.0.1:1/cb', 'user chat', 'authorization_code', 'client_credentials', 'true', '3600', '86400', 'failed', '2'],
      authorizations: ['Bearer x'],
    }), (a, s) => {
      if ((a.status >= 300 && a.status < 400) || s.method === 'HEAD' || a.status === 204) return;
      const type = a.headers.get('content-type') ?? '';
      if (/^text\/html/.test(type)) {
        assert.equal(a.headers.get('x-frame-options'), 'DENY');
        assert.equal(a.headers.get('cache-control'), 'no-store');
        return;
      }
      if (a.status >= 400) expectErrorJson(a);
    }, { requests: 1500, prepare: browser });
    assert.ok(sent >= 1500);
  });
});
