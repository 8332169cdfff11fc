import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

const REDIRECT = 'https://app.example.test/callback';

/**
 * A signed-out authorization request is sent to the login page with itself as
 * `return_to`; one so large that the Location header would pass 16 KB broke
 * the client's connection (fuzz: "Header overflow"). It gets a page instead
 * (src/http/auth/authorize-routes.ts loginRedirect).
 */
describe('authorization requests too large to send back through the login page', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('answers a signed-out decision form with a huge field with a 400 page, not an oversized redirect', async () => {
    const res = await fetch(`${server.url}/oauth2`, {
      method: 'POST', redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'x'.repeat(6000), state: 'x'.repeat(6000), code_verifier: '\u{10000}'.repeat(500) }),
    });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('location'), null);
    // Without the consent CSRF field the form is an authorization request (OIDC Core §3.1.2.1): refused on its own terms.
    assert.match(await res.text(), /This sign-in link is (too long|not valid)/);
  });

  it('answers a GET whose state would not fit a Location header with the same page; a normal one still redirects', async () => {
    const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', public: true });
    const q = (state: string) => new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT, scope: 'user', state, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
    const big = await fetch(`${server.url}/oauth2?${q('%'.repeat(3000))}`, { redirect: 'manual' });
    assert.equal(big.status, 400);
    assert.equal(big.headers.get('location'), null);
    const normal = await fetch(`${server.url}/oauth2?${q('xyz')}`, { redirect: 'manual' });
    assert.equal(normal.status, 302);
    assert.match(normal.headers.get('location')!, /^\/login\?return_to=/);
  });
});
