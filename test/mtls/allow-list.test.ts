import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

/** docs/oauth.md, Application-level access: a client limited to some addresses is refused from anywhere else, with invalid_client. */
describe('address allow-list per client', () => {
  let server: TestServer;
  let proxied: TestServer;
  before(async () => {
    server = await startServer();
    // Behind a proxy on loopback: the caller's address is the one it forwards.
    proxied = await startServer({ env: { GATEHOUSE_TRUST_PROXY: '127.0.0.1' } });
  });
  after(async () => {
    await server?.close();
    await proxied?.close();
  });

  const grant = (s: TestServer, client: { id: string; secret: string | undefined }, headers: Record<string, string> = {}, path = '/oauth/token', form: Record<string, string> = { grant_type: 'client_credentials' }) =>
    fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form),
    });

  it('accepts a client calling from inside its blocks', async () => {
    const client = await server.createClient({ redirectUris: [], grantTypes: ['client_credentials'], allowedAddresses: ['10.0.0.0/8', '127.0.0.0/8'] });
    const res = await grant(server, client);
    assert.equal(res.status, 200);
  });

  it('refuses a client calling from outside them: 401 invalid_client with a challenge', async () => {
    const client = await server.createClient({ redirectUris: [], grantTypes: ['client_credentials'], allowedAddresses: ['10.0.0.0/8', '2001:db8::/32'] });
    const res = await grant(server, client);
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /);
    const body = (await res.json()) as Record<string, string>;
    assert.equal(body.error, 'invalid_client');
    assert.match(body.error_description!, /address/);
    // The same for the client's other endpoints: revocation and introspection authenticate the same way.
    const revoke = await grant(server, client, {}, '/oauth/revoke', { token: 'x' });
    assert.equal(revoke.status, 401);
    // Refused before the secret is looked at: a wrong secret from outside says the same.
    const guess = await grant(server, { id: client.id, secret: 'wrong' });
    assert.equal(((await guess.json()) as Record<string, string>).error_description, body.error_description);
  });

  it('a client secret in the body is held to the list too', async () => {
    const client = await server.createClient({ redirectUris: [], grantTypes: ['client_credentials'], allowedAddresses: ['192.0.2.1'] });
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret! }),
    });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as Record<string, string>).error, 'invalid_client');
  });

  it('behind a trusted proxy, the forwarded address is the one checked', async () => {
    const client = await proxied.createClient({ redirectUris: [], grantTypes: ['client_credentials'], allowedAddresses: ['203.0.113.0/24'] });
    assert.equal((await grant(proxied, client, { 'x-forwarded-for': '203.0.113.7' })).status, 200);
    assert.equal((await grant(proxied, client, { 'x-forwarded-for': '198.51.100.1' })).status, 401);
    assert.equal((await grant(proxied, client)).status, 401);
    // Without a trusted proxy the header is the caller's own claim and changes nothing.
    const direct = await server.createClient({ redirectUris: [], grantTypes: ['client_credentials'], allowedAddresses: ['203.0.113.0/24'] });
    assert.equal((await grant(server, direct, { 'x-forwarded-for': '203.0.113.7' })).status, 401);
  });
});
