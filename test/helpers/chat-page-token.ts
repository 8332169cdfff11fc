import assert from 'node:assert/strict';
import { CHAT_PAGE_CLIENT_ID } from '../../src/core/bot/chat-page-client.js';
import { Agent } from './agent.js';
import { authorize, pkce } from './authorize.js';
import type { Person } from './people.js';
import type { TestServer } from './server.js';

/**
 * A `chat` token of Gatehouse's own chat page (its first-party client), got the
 * way the page gets one: the client id and redirect URI its HTML names, an
 * authorization request with PKCE signed in as the person, then
 * `POST {bot_api_url}/client/token`. Only this client sees the notification
 * bot's chat (issue 24, finding 5).
 */
export async function chatPageToken(server: TestServer, user: { username: string; password: string }): Promise<string> {
  const bot = server.bot!.url;
  const html = await (await fetch(`${bot}/`)).text();
  const clientId = /data-client-id="([^"]+)"/.exec(html)?.[1];
  const redirectUri = /data-redirect-uri="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
  assert.equal(clientId, CHAT_PAGE_CLIENT_ID);
  assert.ok(redirectUri);
  const { verifier, challenge } = pkce();
  const agent = new Agent(server.url);
  const back = await authorize(agent, {
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'chat', state: 's', code_challenge: challenge, code_challenge_method: 'S256',
  }, { user });
  const code = back.searchParams.get('code');
  assert.ok(code, `no code in ${back}`);
  const res = await fetch(`${bot}/client/token`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Creates a person with an account and signs them in to the chat page (a first-party `chat` token). */
export async function chatPagePerson(server: TestServer, username: string): Promise<Person & { password: string }> {
  const user = await server.createUser(username);
  return { username, password: user.password, token: await chatPageToken(server, user) };
}
