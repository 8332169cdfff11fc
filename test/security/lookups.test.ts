import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Agent } from '../helpers/agent.js';
import { startServer, type TestServer } from '../helpers/server.js';

const REDIRECT = 'https://app.example.test/callback';

/**
 * Tables keyed by request input must not reach Object.prototype (the Bot API's
 * `/bot<token>/constructor` answered the bot's state): scope names on the
 * consent page are looked up in a Map (src/http/pages/pages.ts).
 */
describe('lookups keyed by request input', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('shows scopes named after Object.prototype members as unknown permissions on the consent page', async () => {
    const user = await server.createUser('proto-scopes');
    const scope = 'constructor toString hasOwnProperty';
    const client = await server.createClient({ redirectUris: [REDIRECT], scope });
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    const q = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT, scope, state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
    const agent = new Agent(server.url);
    const first = await agent.get(`/oauth2?${q}`);
    const loginAt = new URL(first.headers.get('location')!, server.url);
    const afterLogin = await agent.login(user.username, user.password, loginAt.searchParams.get('return_to')!);
    const consent = await agent.get(afterLogin.headers.get('location')!);
    assert.equal(consent.status, 200);
    const page = await consent.text();
    for (const name of scope.split(' ')) assert.match(page, new RegExp(`Use the permission <code>${name}</code>`));
    assert.doesNotMatch(page, /undefined|function|native code/);
  });
});
