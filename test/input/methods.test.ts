/**
 * Wrong HTTP methods and undecodable paths on every endpoint: a JSON error
 * (RFC 6749 §5.2 shape) with a 4xx status, never a 500 or the framework's
 * own body. One line a case.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { FORM, expectErrorPage, expectOAuthError } from '../security/support.js';

const ADMIN = 'methods-admin-token-0123456789';

const cases: [method: string, path: string, status: number][] = [
  // RFC 6749 §3.2: the token endpoint is POST only (GET is opt-in, see test/security/token-endpoint.test.ts).
  ['GET', '/oauth/token', 405],
  ['GET', '/login/oauth/access_token', 405],
  ['PUT', '/oauth/token', 404],
  ['DELETE', '/login/oauth/access_token', 404],
  ['PATCH', '/oauth/token', 404],
  ['OPTIONS', '/oauth/token', 404],
  ['GET', '/oauth/check_token', 404],
  ['PUT', '/oauth/check_token', 404],
  ['GET', '/oauth/revoke', 404],
  ['DELETE', '/oauth/revoke', 404],
  ['POST', '/oauth/token_key', 404],
  ['POST', '/.well-known/oauth-authorization-server', 404],
  ['DELETE', '/.well-known/jwks.json', 404],
  ['PUT', '/oauth2', 404],
  ['PATCH', '/login/oauth/authorize', 404],
  ['DELETE', '/oauth2', 404],
  ['GET', '/logout', 404],
  ['PUT', '/login', 404],
  ['DELETE', '/admin/users', 404],
  ['PATCH', '/admin/clients', 404],
  // Paths the router cannot decode.
  ['GET', '/%ZZ', 400],
  ['POST', '/oauth/token%', 400],
  ['GET', '/oauth2/%E0%A4%A', 400],
  ['GET', '/login%FF', 400],
];

describe('wrong methods and malformed paths', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { GATEHOUSE_ADMIN_TOKEN: ADMIN } });
  });
  after(() => server.close());

  for (const [method, path, status] of cases) {
    it(`${method} ${path} → ${status}`, async () => {
      const hasBody = !['GET', 'HEAD', 'OPTIONS'].includes(method);
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN}`, ...(hasBody ? { 'content-type': FORM } : {}) },
        ...(hasBody ? { body: 'grant_type=client_credentials' } : {}),
        redirect: 'manual',
      });
      await expectOAuthError(res, status, 'invalid_request');
      if (status === 405) assert.equal(res.headers.get('allow'), 'POST');
    });
  }

  it('a browser asking for a page that does not exist gets an HTML page', async () => {
    await expectErrorPage(await fetch(`${server.url}/nowhere`, { headers: { accept: 'text/html' } }), 404);
    await expectErrorPage(await fetch(`${server.url}/oauth2`, { method: 'PUT', headers: { accept: 'text/html,*/*' } }), 404);
  });
});
